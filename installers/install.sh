#!/bin/sh
# Put `maestro` on PATH for this user (Linux, macOS), then, given arguments, wire it into
# the host CLIs.
#
#   sh installers/install.sh                          install the clone this script is in
#   MAESTRO_SOURCE=git+https://HOST/OWNER/REPO.git sh install.sh
#                                                     install from a repository URL
#   sh installers/install.sh --host claude            ... then `maestro install --host claude`
#   sh installers/install.sh --host all --scope user  ... for every project
#
# The first of these that is on PATH installs it, in an environment of its own: `uv tool
# install`, `pipx install`; else a virtual environment in
# ${XDG_DATA_HOME:-~/.local/share}/maestro/venv, `maestro` linked into ~/.local/bin.
# `pip install --user` is never used: a Python that is "externally managed" (PEP 668:
# Debian, Ubuntu, Homebrew) refuses it. Running this again upgrades. Environment:
#   MAESTRO_SOURCE  a clone's folder or a pip-style URL (git+https://...); default: the
#                   clone holding this script
#   PYTHON          the interpreter of the virtual environment (default python3)
set -eu

die() {
    printf 'install.sh: %s\n' "$*" >&2
    exit 1
}

clone=
if [ -f "$0" ]; then # not when piped to sh
    clone=$(cd "$(dirname "$0")/.." 2>/dev/null && pwd) || clone=
fi
if [ -n "${MAESTRO_SOURCE:-}" ]; then
    source=$MAESTRO_SOURCE
elif [ -f "$clone/pyproject.toml" ] && [ -f "$clone/maestro/__init__.py" ]; then
    source=$clone
else
    die "this script is not in a clone of Maestro, and MAESTRO_SOURCE names none. Fix: run installers/install.sh from a clone, or name the repository: MAESTRO_SOURCE=git+https://HOST/OWNER/REPO.git sh install.sh"
fi

if command -v uv >/dev/null 2>&1; then
    # --reinstall: a clone's new commits are built again, not taken from uv's cache.
    uv tool install --force --reinstall "$source" >&2 ||
        die "uv could not install $source. Fix: see uv's error above."
    bin_dir=$(uv tool dir --bin)
elif command -v pipx >/dev/null 2>&1; then
    pipx install --force "$source" >&2 ||
        die "pipx could not install $source. Fix: see pipx's error above."
    bin_dir=$(pipx environment --value PIPX_BIN_DIR 2>/dev/null) || bin_dir="$HOME/.local/bin"
else
    python=${PYTHON:-python3}
    command -v "$python" >/dev/null 2>&1 ||
        die "none of uv, pipx and $python is on PATH. Fix: install uv (https://docs.astral.sh/uv/) or Python 3.11+."
    venv="${XDG_DATA_HOME:-$HOME/.local/share}/maestro/venv"
    bin_dir="$HOME/.local/bin"
    link="$bin_dir/maestro"
    if [ -e "$link" ] && [ "$(readlink "$link" 2>/dev/null)" != "$venv/bin/maestro" ]; then
        die "$link exists and is not this installer's link. Fix: remove it (pipx uninstall maestro-orchestra, or rm $link), then run this again."
    fi
    "$python" -m venv "$venv" >&2 ||
        die "$python could not make a virtual environment in $venv. Fix: install its venv module (Debian, Ubuntu: apt install python3-venv), or install uv or pipx, and run this again."
    "$venv/bin/python" -m pip install --upgrade "$source" >&2 ||
        die "pip could not install $source into $venv. Fix: see pip's error above."
    mkdir -p "$bin_dir"
    ln -sf "$venv/bin/maestro" "$link"
fi

maestro="$bin_dir/maestro"
version=$("$maestro" --version 2>/dev/null) ||
    die "the package installed but $maestro does not run. Fix: run it to see why."

if [ "$#" -eq 0 ]; then
    printf 'Installed %s: %s\n' "$version" "$maestro"
    case ":$PATH:" in
        *":$bin_dir:"*) ;;
        *)
            # shellcheck disable=SC2016  # $PATH is for the person's shell to expand
            printf '%s is not on PATH: export PATH="%s:$PATH" here and in your shell startup file.\n' "$bin_dir" "$bin_dir"
            ;;
    esac
    printf 'Next: maestro demo, or maestro install --host claude|gemini|codex|all [--scope user]\n'
    exit 0
fi
exec "$maestro" install "$@"
