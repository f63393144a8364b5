#!/bin/sh
# Install Maestro for this user, then (given arguments) wire it into the host CLIs.
#
#   sh install.sh                          install or upgrade Maestro; print the next step
#   sh install.sh --host claude            ... then run `maestro install --host claude` here
#   sh install.sh --host all --scope user  ... for every project, from your home folder
#
# pipx is used when present (an isolated venv, `maestro` linked into ~/.local/bin);
# otherwise `python3 -m pip install --user`. Environment:
#   MAESTRO_SOURCE  what to install: a PyPI name (default maestro-orchestra), a path or a URL
#   PYTHON          the interpreter for the pip route (default python3)
set -eu

source=${MAESTRO_SOURCE:-maestro-orchestra}
python=${PYTHON:-python3}

die() {
    printf 'install.sh: %s\n' "$*" >&2
    exit 1
}

if command -v pipx >/dev/null 2>&1; then
    pipx install --force "$source" >&2 ||
        die "pipx could not install $source. Fix: see pipx's error above, or install with pip instead: python3 -m pip install --user $source, then run maestro install."
    bin_dir=$(pipx environment --value PIPX_BIN_DIR 2>/dev/null) || bin_dir="$HOME/.local/bin"
else
    command -v "$python" >/dev/null 2>&1 ||
        die "neither pipx nor $python is on PATH. Fix: install pipx (https://pipx.pypa.io) or Python 3.11+."
    "$python" -m pip install --user --upgrade "$source" >&2 ||
        die "pip could not install $source. Fix: install pipx (apt install pipx, or brew install pipx) and run this again."
    bin_dir=$("$python" -c 'import os, sysconfig; print(sysconfig.get_path("scripts", f"{os.name}_user"))')
fi

maestro="$bin_dir/maestro"
[ -x "$maestro" ] || die "the package installed but $maestro is missing."

if [ "$#" -eq 0 ]; then
    printf 'Maestro is installed: %s\n' "$maestro"
    printf 'Next: %s install --host claude|gemini|codex|all [--scope user]\n' "$maestro"
    exit 0
fi
exec "$maestro" install "$@"
