# Runtime hook of the Qt bundle: pywebview's only toolkit here is Qt. Without this it
# tries GTK first and logs a traceback for the missing `gi` before falling back.
import os

os.environ.setdefault("PYWEBVIEW_GUI", "qt")
