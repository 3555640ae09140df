"""The local web server for Moka's UI and the view sandbox."""
