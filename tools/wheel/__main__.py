"""`python -m gpucheck`: runs the gpucheck binary this package installed, with the same arguments."""
import os
import sys
import sysconfig
from importlib import metadata


def binary():
    # The script's installed path is in the distribution's RECORD whatever the scheme (venv,
    # --user, --target); the scheme's scripts folder is the fallback.
    try:
        for f in metadata.distribution("gpucheck").files or ():
            if f.parts[-2:] == ("bin", "gpucheck"):
                path = str(f.locate())
                if os.access(path, os.X_OK):
                    return path
    except metadata.PackageNotFoundError:
        pass
    return os.path.join(sysconfig.get_path("scripts"), "gpucheck")


def main():
    path = binary()
    try:
        os.execv(path, [path] + sys.argv[1:])
    except OSError as e:
        sys.exit(f"gpucheck: cannot run {path}: {e.strerror}")


if __name__ == "__main__":
    main()
