"""Tool approval: may a tool call the model made run now, or must the person allow it first?

One policy for every call (``decide``), from the tool's annotations, the person's standing
choices in the config, and who started the turn. ``Approvals`` asks the person through
events (``chat.approval``) and takes the answer (``chat.approve``).

Annotations are the server's own claims. They count only for a server whose annotations the person
trusts (``trustAnnotations`` in its config entry; Moka's own demo server by default): from any other
server a tool that says ``readOnlyHint: true`` is asked about like any other (security finding G3).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from moka_shell.config import ApprovalMode, ApprovalSettings, MokaConfig, ServerApproval, ToolChoice
from moka_shell.core.chat.tool_call import ToolCall
from moka_shell.core.shell import Emit
from moka_shell.errors import InvalidParamsError

Decision = Literal["run", "ask", "deny"]
Answer = Literal["once", "always", "deny"]
DECLINED = "The person declined to run this tool."


@dataclass(frozen=True)
class TurnOrigin:
    """Who started a turn: the person (no server), or a view's ``ui/message`` (its server and tool)."""

    server: str | None = None
    tool: str | None = None

    @property
    def from_app(self) -> bool:
        """Was the turn started by an app's message rather than by the person?"""
        return self.server is not None


def is_read_only(annotations: dict[str, Any] | None) -> bool:
    """Does the tool say it changes nothing (``readOnlyHint: true``)?"""
    return bool(annotations) and (annotations or {}).get("readOnlyHint") is True


def annotation_words(annotations: dict[str, Any] | None, *, trusted: bool = True) -> list[str]:
    """The tool's annotations as short phrases a person reads on the approval card.

    From a server whose annotations are not trusted, a claim that would make the call look safer
    is shown as the server's claim, not as a fact.
    """
    a = annotations or {}
    if not any(k.endswith("Hint") for k in a):
        return ["The tool says nothing about what it does (no annotations)"]
    words = []
    if a.get("readOnlyHint") is True:
        words.append("Only reads; changes nothing" if trusted else
                     "Says it only reads and changes nothing (the server's own claim; you have not said to trust it)")
    else:
        # The spec's defaults: a tool that may write is destructive and open-world unless it says otherwise.
        if a.get("destructiveHint", True):
            words.append("May delete or overwrite things")
        else:
            words.append("May change things (adds only)" if trusted else "Says it only adds things (the server's claim)")
        if a.get("idempotentHint") is True:
            words.append("Running it again has no further effect" if trusted else
                         "Says running it again has no further effect (the server's claim)")
    if a.get("openWorldHint", True):
        words.append("Reaches outside systems (the internet, other services)")
    return words


def standing_choice(settings: ApprovalSettings, server: str, tool: str) -> ToolChoice | None:
    """The person's saved choice for this tool: its own, else its server's, else none."""
    per_server = settings.servers.get(server)
    if per_server is None:
        return None
    return per_server.tools.get(tool) or per_server.default


def decide(settings: ApprovalSettings, server: str, tool: str, annotations: dict[str, Any] | None,
           origin: TurnOrigin, *, trusted: bool) -> tuple[Decision, str]:
    """The policy: run, ask or deny this call, and why (the reason is shown on the card).

    ``trusted``: whether the person trusts this server's annotations; if not, a read-only claim counts for nothing.
    """
    choice = standing_choice(settings, server, tool)
    if choice == "deny":
        return "deny", "you chose never to run this tool"
    claims_read_only = is_read_only(annotations)
    read_only = claims_read_only and trusted
    if origin.from_app:
        # An app's message is untrusted text the person did not write; choices the person made for
        # their own requests ("always allow", mode "all") do not carry over. Only reads on the app's
        # own server run unasked: that server's view can already call its own tools directly.
        if read_only and server == origin.server and settings.mode != "ask":
            return "run", "a read-only tool of the app's own server"
        return "ask", f"the {origin.tool} app of server {origin.server} started this turn, not you"
    if settings.mode == "all":
        return "run", "every tool may run without asking (approval mode 'all')"
    if choice == "allow":
        return "run", "you chose to always allow this tool"
    if choice is None and read_only and settings.mode == "read-only":
        return "run", "a read-only tool"
    if choice == "ask":
        return "ask", "you chose to be asked before this tool runs"
    if read_only:
        return "ask", "approval mode 'ask': every call asks, read-only ones too"
    if claims_read_only:
        return "ask", (f"the tool says it only reads, but that is {server}'s own claim and you have not said "
                       "to trust this server's tool hints")
    if not annotations:
        return "ask", "the tool does not say what it does"
    return "ask", "the tool may change things"


def trust_would_run(settings: ApprovalSettings, server: str, tool: str, annotations: dict[str, Any] | None,
                    origin: TurnOrigin) -> bool:
    """Would trusting this server's annotations let this call run? (The card then offers it.)

    Offered in the person's own turns only, as "always allow" is: a standing choice about a
    server is the person's to make for their own requests, not one an app's message prompts.
    """
    return (not origin.from_app and is_read_only(annotations)
            and decide(settings, server, tool, annotations, origin, trusted=True)[0] == "run")


@dataclass
class _Pending:
    future: asyncio.Future[tuple[Answer, dict[str, Any] | None]]
    call: ToolCall
    conversation_id: str = ""


class Approvals:
    """Applies the policy to each call and asks the person when it says so."""

    def __init__(self, config: MokaConfig, emit: Emit, save_config: Callable[[], None], *,
                 can_ask: Callable[[], bool], mode: ApprovalMode | None = None) -> None:
        self._config = config
        self._emit = emit
        self._save_config = save_config
        self._can_ask = can_ask
        self._mode = mode  # `moka chat --approve`: for this run only, never saved
        self._pending: dict[str, _Pending] = {}
        self.unanswered: list[str] = []  # what was refused because nobody could be asked (moka chat reports it)

    def can_ask(self) -> bool:
        """Is someone there to answer a question now?"""
        return self._can_ask()

    def settings(self) -> ApprovalSettings:
        """The settings in force (the run's --approve mode over the config's)."""
        cfg = self._config.approval
        return cfg if self._mode is None else cfg.model_copy(update={"mode": self._mode})

    def trusts(self, server: str) -> bool:
        """Does the person trust this server's tool annotations (config ``trustAnnotations``)?"""
        entry = self._config.mcp_servers.get(server)
        return entry is not None and entry.annotations_trusted

    async def review(self, cid: str, call: ToolCall, annotations: dict[str, Any] | None, title: str | None,
                     origin: TurnOrigin, publish: Callable[[ToolCall], None]) -> str | None:
        """None when the call may run (maybe with edited arguments); else why it must not, for the model."""
        settings, trusted = self.settings(), self.trusts(call.server)
        decision, reason = decide(settings, call.server, call.policy_tool, annotations, origin, trusted=trusted)
        if decision == "run":
            return None
        if decision == "deny":
            return f"{DECLINED} (They chose never to run it.)"
        if not self._can_ask():
            # Nobody is there to answer: fail now rather than hang (moka chat, a closed UI).
            refusal = (f"{call.server}/{call.policy_tool} needs the person's approval ({reason}), and nobody can answer "
                       "here. In `moka chat`, run again with `--approve all` to let every tool run.")
            self.unanswered.append(refusal)
            return refusal
        call.status = "approval"
        offer = not trusted and trust_would_run(settings, call.server, call.policy_tool, annotations, origin)
        call.approval = {"reason": reason, "title": title, "annotations": annotations or {},
                         "words": annotation_words(annotations, trusted=trusted), "trustedHints": trusted,
                         **({"offerTrust": True} if offer else {}),
                         **({"fromApp": {"server": origin.server, "tool": origin.tool}} if origin.from_app else {})}
        fut: asyncio.Future[tuple[Answer, dict[str, Any] | None]] = asyncio.get_running_loop().create_future()
        self._pending[call.id] = _Pending(fut, call, cid)
        publish(call)
        self._emit("chat.approval", {"conversationId": cid, "messageId": call.message_id, "call": call.to_json()})
        try:
            answer, arguments = await fut
        finally:
            self._pending.pop(call.id, None)
            call.approval = None
        if answer == "deny":
            return DECLINED
        if arguments is not None:
            call.arguments = arguments
        if answer == "always" and not origin.from_app:
            self.remember(call.server, call.policy_tool, "allow")
        call.status = "running"
        return None

    def waiting(self, call_id: str) -> ToolCall | None:
        """The call ``call_id`` if it waits for the person now."""
        pending = self._pending.get(call_id)
        return pending.call if pending is not None else None

    def pending(self) -> list[dict[str, Any]]:
        """Calls waiting for the person now (for a UI that connects late, or reconnects), with where they are."""
        return [{**p.call.to_json(), "conversationId": p.conversation_id, "messageId": p.call.message_id}
                for p in self._pending.values()]

    def answer(self, call_id: str, answer: Answer, arguments: dict[str, Any] | None = None) -> None:
        """The person's answer to one waiting call; edited ``arguments`` replace the model's."""
        pending = self._pending.get(call_id)
        if pending is None:
            raise InvalidParamsError(f"no tool call {call_id!r} is waiting for approval")
        if answer not in ("once", "always", "deny"):
            raise InvalidParamsError(f"'decision' must be 'once', 'always' or 'deny', not {answer!r}")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParamsError("'arguments' must be a JSON object")
        if not pending.future.done():
            pending.future.set_result((answer, arguments))

    def remember(self, server: str, tool: str | None, choice: ToolChoice | None) -> None:
        """Save a standing choice for one tool, or for every tool of a server (None clears it)."""
        servers = dict(self._config.approval.servers)
        entry = servers.get(server, ServerApproval()).model_copy(deep=True)
        if tool is None:
            entry.default = choice
        elif choice is None:
            entry.tools.pop(tool, None)
        else:
            entry.tools[tool] = choice
        if entry.default is None and not entry.tools:
            servers.pop(server, None)
        else:
            servers[server] = entry
        self._config.approval = self._config.approval.model_copy(update={"servers": servers})
        self._save_config()
