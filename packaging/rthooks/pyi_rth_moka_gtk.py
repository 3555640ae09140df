# Runtime hook of the GTK bundle (.deb): pywebview uses the distribution's GTK 3 and
# WebKitGTK 4.1 through gi; Qt is not in this bundle.
import os

os.environ.setdefault("PYWEBVIEW_GUI", "gtk")
