"""The ACT rules vacant ships, by name, and the checks a `[gate]` table's values pass: the one
vocabulary the gate applies (policy/gate/rules.py) and the contract validates (policy/contract/contract.py).
Stdlib only (hot path); a rule's pattern is compiled when a call first needs it.
"""

from __future__ import annotations

import os
from pathlib import Path

from vacant.core.leanstd import namedtuple
from vacant.core.lazyre import Lazy

DEFAULT_ARMS = "arms"
NAME_PATTERN = Lazy(r"^[a-z0-9][a-z0-9-]*$")  # a `[gate]` rule's name

Rule = namedtuple("Rule", "name tool command why")  # tool/command: compiled regex or None


def _rx(pattern: str) -> Lazy:
    """A shipped rule's pattern, compiled when a call first needs it (a Read needs none)."""
    return Lazy(pattern)


# -- the shipped rules ---------------------------------------------------------------------------

_OPTS = r"(?:\s+(?:-C|-c|--git-dir|--work-tree|--namespace|--exec-path|--config-env)\s+\S+|\s+-\S*)*"
_WRITE_METHOD = r"'?(?i:POST|PUT|PATCH|DELETE)\b"
DEFAULT_RULES = (
    Rule("git-push", None, _rx(
        r"^(?:git" + _OPTS + r"\s+(?:push|send-pack|http-push|subtree\s+push|lfs\s+push|svn\s+dcommit|p4\s+submit)"
        r"|git-(?:push|send-pack|http-push)|(?:hub|sl|jj|yadm)(?:\s+\S+)*?\s+(?:push|submit)|jj\s+git\s+push)(?:\s|$)"),
         "a remote git repository (commits, branches or tags pushed where others see them)"),
    Rule("package-publish", None, _rx(
        r"^(?:(?:npm|pnpm|yarn|bun)(?:\s+\S+)*?\s+(?:pub\w*|unpublish|deprecate|dist-tags?\s+(?:add|rm)|owner\s+(?:add|rm))"
        r"|twine\s+upload|python[0-9.]*\s+-m\s+twine\s+upload"
        r"|cargo\s+(?:publish|yank|owner)|(?:poetry|flit|uv|hatch|pdm|rye)\s+publish|gem\s+(?:push|yank)"
        r"|(?:docker|podman|buildah|nerdctl)\s+(?:image\s+|manifest\s+)?push|(?:docker\s+)?buildx\s+(?:\S+\s+)*?--push"
        r"|docker\s+build\s+(?:\S+\s+)*?--push|(?:docker\s+)?buildx\s+(?:\S+\s+)*?--output[= ]\S*type=registry"
        r"|helm\s+push|crane\s+(?:push|copy|cp|tag|delete)|oras\s+push|skopeo\s+(?:copy|delete|sync)"
        r"|ko\s+(?:publish|build|apply|resolve)|(?:dotnet\s+)?nuget\s+push|(?:anaconda|conda)\s+upload"
        r"|mvn\s+(?:\S+\s+)*?deploy|(?:\./)?gradlew?\s+(?:\S+\s+)*?publish\S*|gh\s+release\s+(?:create|upload|edit|delete)"
        r"|vsce\s+publish|ovsx\s+publish|swift\s+package-registry\s+publish|pod\s+trunk\s+push"
        r"|lerna\s+publish|changeset\s+publish|semantic-release|goreleaser\s+release|goreleaser$)(?:\s|$)"),
         "a package registry (a release others can install)"),
    Rule("deploy", None, _rx(
        r"^(?:kubectl(?:\s+\S+)*?\s+(?:apply|create|delete|replace|patch|scale|rollout|set|edit|annotate|label"
        r"|drain|cordon|expose|autoscale)|terraform(?:\s+-\S+)*\s+(?:apply|destroy|import)"
        r"|tofu(?:\s+-\S+)*\s+(?:apply|destroy)|helm(?:\s+\S+)*?\s+(?:install|upgrade|uninstall|rollback|delete)"
        r"|pulumi(?:\s+\S+)*?\s+(?:up|destroy|update)|(?:serverless|sls|fly|flyctl|netlify|firebase|eb|cdk"
        r"|railway|wrangler|vercel|surge|heroku|dokku|kamal|skaffold|waypoint|nomad|amplify|sam"
        r"|supabase|convex|deno\s+deploy|deployctl)\s+(?:\S+\s+)*?(?:deploy|publish|up|push|promote|release"
        r"|rollback|destroy|delete|apply|job\s+run|rm)|skaffold\s+run|vercel|ansible-playbook"
        r"|heroku\s+\S+:(?:create|destroy|set|unset|add|remove|rollback|restart|promote|scale)"
        r"|gsutil(?:\s+-\S+)*\s+(?:cp|mv|rm|rsync|rb|mb|acl|setmeta|iam)|gcloud\s+storage\s+(?:cp|mv|rm|rsync)"
        r"|rclone\s+(?:copy|copyto|sync|move|moveto|delete|deletefile|purge|rmdir|mkdir)|s3cmd\s+(?:put|del|sync|rm|mv)"
        r"|azcopy\s+(?:copy|sync|remove)|doctl(?:\s+\S+)*?\s+(?:create|delete|update|deploy)"
        r"|docker\s+(?:stack|service)\s+(?:deploy|update|rm|create)|gcloud(?:\s+\S+)*?\s+(?:deploy|create|delete|update)"
        r"|aws(?:\s+\S+)*?\s+(?:deploy|create-\S+|delete-\S+|put-\S+|update-\S+|cp|sync|rm|mv)"
        r"|az(?:\s+\S+)*?\s+(?:create|delete|update|deploy))(?:\s|$)"),
         "deployed infrastructure or services (a cluster, a cloud account, a live site)"),
    Rule("http-write", None, _rx(
        r"^(?:curl\s(?:.*\s)?(?:-[a-zA-Z]*X\s*" + _WRITE_METHOD + r"|--request[\s=]" + _WRITE_METHOD +
        r"|-[a-zA-Z]*[dFT](?:\s|$|\S)|--data\S*|--form\S*|--json|--upload-file)"
        r"|wget\s(?:.*\s)?--(?:post-data|post-file|body-data|body-file|method)"
        r"|(?:https?|xhs?|curlie)\s+(?:\S+\s+)*?" + _WRITE_METHOD + r"(?:\s|$)"
        r"|(?:https?|xhs?)\s+(?:\S+\s+)*?\S+(?::=|=@|:=@|@)\S*"
        r"|aria2c\s(?:.*\s)?--(?:post|upload)|lwp-request\s+-m\s+" + _WRITE_METHOD + r")"),
         "a remote service (an HTTP request that writes: POST, PUT, PATCH, DELETE or a request body)"),
    Rule("code-host-write", None, _rx(
        r"^(?:gh(?:\s+-\S+(?:\s+\S+)?)*\s+(?:pr\s+(?:merge|create|close|reopen|comment|edit|review|ready|lock|unlock)"
        r"|issue\s+(?:create|close|reopen|comment|edit|delete|transfer|lock|unlock|pin|unpin)"
        r"|repo\s+(?:create|delete|edit|rename|archive|unarchive|sync|fork|deploy-key\s+(?:add|delete))"
        r"|(?:secret|variable)\s+(?:set|delete)|workflow\s+(?:run|enable|disable)|run\s+(?:cancel|rerun|delete)"
        r"|gist\s+(?:create|edit|delete)|label\s+(?:create|edit|delete|clone)|ruleset\s+\S+|cache\s+delete"
        r"|api\s+(?:.*\s)?(?:-X\s*" + _WRITE_METHOD + r"|--method[\s=]" + _WRITE_METHOD +
        r"|-[fF](?:\s|$)|--(?:raw-)?field(?:\s|=)|--input(?:\s|=)))"
        r"|glab\s+(?:mr\s+(?:merge|create|close|reopen|note|approve|update)|issue\s+(?:create|close|note|update|delete)"
        r"|repo\s+(?:create|delete|fork|archive)|release\s+(?:create|upload|delete)|api\s+(?:.*\s)?-X\s*"
        + _WRITE_METHOD + r")|tea\s+(?:pr|pulls|issues?|releases?)\s+(?:create|merge|close|reopen|edit|delete))(?:\s|$)"),
         "a code host (GitHub, GitLab, Gitea): merges, pull requests, issues, comments, releases, repository settings"),
)
# Rules implemented in code (not a regex); removable by name like the others.
CODE_RULES = {
    "delete-outside-workspace": "files outside the workspace (deleted)",
    "gate-self": "vacant's own hooks, gate policy or records (which decide what needs a person's answer)",
    "write-outside-workspace": "files outside the workspace (written; temp directories excepted)",
    "record-delete": "vacant's records or the agent's hook settings (deleted, so the run would go unrecorded)",
}
RULE_NAMES = tuple(rule.name for rule in DEFAULT_RULES) + tuple(CODE_RULES)


# -- the values of a `[gate]` table ----------------------------------------------------------------


def regex_problem(pattern: object) -> str | None:
    if not isinstance(pattern, str) or not pattern:
        return "must be a non-empty regular expression string"
    import re

    try:
        re.compile(pattern)
    except re.error as error:
        return f"{pattern!r} is not a valid regular expression ({error})"
    return None


def arms_problem(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be a directory path relative to the workspace, e.g. \"arms\""
    if os.path.isabs(value) or ".." in Path(value).parts:
        return f"{value!r} leaves the workspace: use a path relative to the workspace root, without '..'"
    return None
