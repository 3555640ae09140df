"""The desktop shell: pywebview windows, the native menu, Qt helpers and the start-up frame."""
