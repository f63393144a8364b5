"""What Gemini CLI reads from its own files, for its module (``maestro.clis.gemini``): the
Policy Engine rules that give a spoke exactly its tier's tools and a hub Maestro's own
commands, its sign-in, and its folder-trust rules."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import tomli_w

from maestro.install.host import toml_string
from maestro.paths import user_home
from maestro.spokes.base import SignIn, read_json, tilde

READ = ("read_file", "read_many_files", "list_directory", "glob", "grep_search")
# The shell tool and the two that follow the commands it started in the background.
SHELL = ("run_shell_command", "list_background_processes", "read_background_output")
WRITE = ("write_file", "replace")
WEB_SEARCH = ("google_web_search",)
# Every other built-in tool of Gemini CLI 0.61 (its *_TOOL_NAME constants, plus
# save_memory, which appends to ~/.gemini/GEMINI.md: outside the project). Headless it
# offers some of them in every tier (invoke_agent starts subagents, web_fetch reaches
# the network, enter_plan_mode, activate_skill, write_todos, update_topic): none is a
# task's job, so the policy takes them all away.
OTHERS = (
    "save_memory",
    "web_fetch",
    "invoke_agent",
    "activate_skill",
    "ask_user",
    "complete_task",
    "enter_plan_mode",
    "exit_plan_mode",
    "get_internal_docs",
    "list_mcp_resources",
    "read_mcp_resource",
    "take_snapshot",
    "update_topic",
    "write_todos",
    "tracker_add_dependency",
    "tracker_create_task",
    "tracker_get_task",
    "tracker_list_tasks",
    "tracker_update_task",
    "tracker_visualize",
)
TIER_TOOLS: dict[str, tuple[str, ...]] = {
    "read-only": READ,
    "read+shell": READ + SHELL,
    "read+write": READ + WRITE,
    "full": READ + WRITE + SHELL,
}


def denied_tools(tier: str, web_search: bool = False) -> tuple[str, ...]:
    """Gemini's built-in tools that ``tier`` (with web search or not) does not grant."""
    granted = set(TIER_TOOLS[tier]) | (set(WEB_SEARCH) if web_search else set())
    return tuple(t for t in READ + SHELL + WRITE + WEB_SEARCH + OTHERS if t not in granted)


def policy_toml(tier: str, web_search: bool = False) -> str:
    """The Policy Engine rules that take away the tools ``tier`` does not grant."""
    rule = {
        "toolName": list(denied_tools(tier, web_search)),
        "decision": "deny",
        "priority": 999,
        "denyMessage": f"Maestro dispatched this task with tool tier {tier}: this tool is not allowed.",
    }
    return (
        f"# Maestro spoke policy for tool tier {tier}. Written for one dispatch, loaded with --policy.\n"
        + tomli_w.dumps({"rule": [rule]})
    )


# Headless Gemini offers the model no shell tool unless a policy allows it: a user
# policy file does (verified with 0.61; a project's .gemini/policies is not read
# before the folder's policies are acknowledged), so the user-scope install writes one.
HUB_POLICY = "policies/maestro.toml"


def hub_policy(invocation: str) -> str:
    """The user policy that lets a Gemini hub run Maestro's own commands, headless too."""
    prefixes = list(dict.fromkeys([invocation, "maestro"]))
    return (
        "# Written by `maestro install --host gemini --scope user`: Gemini CLI may run Maestro's own\n"
        "# commands (a run is followed with many calls), headless too. Nothing else is allowed.\n"
        "[[rule]]\n"
        'toolName = "run_shell_command"\n'
        f"commandPrefix = [{', '.join(toml_string(p) for p in prefixes)}]\n"
        'decision = "allow"\n'
        "priority = 500\n"
    )


# Gemini CLI 0.61's sign-in: ``security.auth.selectedType`` in its settings, else the first
# of these variables that is set (to that value, if one is named): its getAuthTypeFromEnv.
AUTH_FROM_ENV = (
    ("GOOGLE_GENAI_USE_GCA", "true", "oauth-personal"),
    ("GOOGLE_GENAI_USE_VERTEXAI", "true", "vertex-ai"),
    ("GOOGLE_GEMINI_BASE_URL", None, "gateway"),
    ("GEMINI_API_KEY", None, "gemini-api-key"),
)
# HOSTS.md section 5 (google-gemini/gemini-cli discussion #28017).
PERSONAL_ACCOUNTS = (
    "Gemini CLI stopped serving individual Google accounts (Google AI Pro/Ultra, free tier) on "
    "2026-06-18: API-key, Vertex AI and Gemini Code Assist (enterprise) users keep it, and "
    "individuals were moved to the Antigravity CLI (agy)"
)


def gemini_dir(env: Mapping[str, str]) -> Path:
    """Gemini CLI's own folder: ``~/.gemini`` (GEMINI_CLI_HOME replaces the home)."""
    return Path(env.get("GEMINI_CLI_HOME") or user_home(env)) / ".gemini"


def auth_type(env: Mapping[str, str]) -> str | None:
    """How Gemini CLI signs in, as its user settings and ``env`` choose."""
    security = read_json(gemini_dir(env) / "settings.json").get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    chosen = auth.get("selectedType") if isinstance(auth, dict) else None
    if isinstance(chosen, str) and chosen:
        return chosen
    for key, value, kind in AUTH_FROM_ENV:
        if env.get(key) and value in (None, env[key]):
            return kind
    return None


def sign_in(env: Mapping[str, str]) -> SignIn:
    """Whether Gemini CLI is signed in, as its settings and ``env`` show (``Spoke.sign_in``)."""
    kind = auth_type(env)
    settings = tilde(gemini_dir(env) / "settings.json", env)
    api_key = "use an API key: set GEMINI_API_KEY (Google AI Studio) and security.auth.selectedType gemini-api-key"
    if kind is None:
        return SignIn(
            False,
            f"no sign-in chosen (security.auth.selectedType in {settings}, or GEMINI_API_KEY, "
            "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA): headless gemini exits 41",
            f"{api_key}, or configure Vertex AI",
        )
    if kind == "gemini-api-key":
        if env.get("GEMINI_API_KEY"):
            return SignIn(True, "an API key (GEMINI_API_KEY is set)")
        return SignIn(
            None,
            "an API key, but GEMINI_API_KEY is not in this environment (gemini may read a .env file)",
            "export GEMINI_API_KEY",
        )
    if kind == "vertex-ai":
        if env.get("GOOGLE_API_KEY") or (
            env.get("GOOGLE_CLOUD_PROJECT") and env.get("GOOGLE_CLOUD_LOCATION")
        ):
            return SignIn(True, "Vertex AI")
        return SignIn(
            False,
            "Vertex AI, without GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION or GOOGLE_API_KEY",
            "set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (or GOOGLE_API_KEY)",
        )
    if kind != "oauth-personal":
        return SignIn(None, f"sign-in {kind!r}, which only a call shows")
    login = gemini_dir(env) / "oauth_creds.json"
    if not login.is_file():
        return SignIn(
            False,
            f"Login with Google, but no {tilde(login, env)}",
            f"run `gemini` and sign in, or {api_key}",
        )
    project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GOOGLE_CLOUD_PROJECT_ID")
    if project:
        return SignIn(
            True, f"Login with Google for project {project} (a Gemini Code Assist licence)"
        )
    return SignIn(
        False,
        f"Login with Google with a personal account: {PERSONAL_ACCOUNTS}",
        f"{api_key}, use Vertex AI, or a Code Assist licence (GOOGLE_CLOUD_PROJECT); "
        "meanwhile plan gemini's tasks for claude or codex",
    )


def trusted(project: Path, env: Mapping[str, str]) -> bool | None:
    """Gemini CLI's folder-trust decision for ``project`` (its own rules, 0.61)."""
    flag = env.get("GEMINI_CLI_TRUST_WORKSPACE")
    if flag in ("true", "false"):
        return flag == "true"
    settings = read_json(user_home(env) / ".gemini" / "settings.json")
    enabled = ((settings.get("security") or {}).get("folderTrust") or {}).get("enabled", True)
    if enabled is False:
        return True
    rules_path = Path(
        env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        or user_home(env) / ".gemini" / "trustedFolders.json"
    )
    rules = read_json(rules_path)
    where = project.resolve()
    best: tuple[int, str] | None = None
    for rule, level in rules.items():
        folder = Path(rule).parent if level == "TRUST_PARENT" else Path(rule)
        folder = folder.expanduser().resolve()
        if (where == folder or folder in where.parents) and (best is None or len(rule) > best[0]):
            best = (len(rule), level)
    if best is None:
        return None
    return best[1] in ("TRUST_FOLDER", "TRUST_PARENT")
