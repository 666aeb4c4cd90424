"""``hermes-memory sessions browse``: an interactive session picker on a terminal.

Type to filter (titles, ids, then the archive's message discovery, Chinese included),
arrows to move, a preview of the transcript around the hit, Enter prints the chosen id and
how to resume it; rename and delete (after a confirmation) without leaving the picker.
Esc, Ctrl-C or ``q`` (in the list) quits with status 0 and prints nothing. With ``--json``,
or when stdin or stdout is not a terminal, it prints the list exactly as ``sessions list``.

Built on prompt_toolkit, imported only here, so no other command pays for it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from hermes_memory_cli._commands import sessions
from hermes_memory_cli._commands._browse_data import (
    PICKER_ROWS,
    BrowseModel,
    Preview,
    Row,
    needles,
)
from hermes_memory_cli._context import Context, visible_controls
from hermes_memory_cli._i18n import cli_gettext as _

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

#: Longest part of one message shown in the preview (lines), and of one line (characters).
_MESSAGE_LINES = 12
_LINE_CHARS = 400
#: Below this width the preview goes under the list instead of beside it.
_SIDE_BY_SIDE = 100
#: Untitled rows this close to the selection show their first user message.
_LABELLED_NEAR = 120
#: The filter runs once typing pauses this long (seconds), not once per keystroke.
_DEBOUNCE = 0.08


def browse(ctx: Context) -> int:
    """``sessions browse [--limit N | --all] [--source S]``."""
    interactive = not ctx.json and ctx.is_terminal and sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        if ctx.args.limit is None:
            ctx.args.limit = 20  # exactly `sessions list`'s default
        return sessions.list_(ctx)
    limit = None if ctx.args.all else (ctx.args.limit or PICKER_ROWS)
    try:
        with ctx.session_store(create=False) as store:
            model = (
                None if store is None else BrowseModel(store, limit=limit, source=ctx.args.source)
            )
            if model is None or not model.sessions:
                ctx.args.limit = ctx.args.limit or 20
                return sessions.list_(ctx)  # "No sessions in ..." as `sessions list` says it
            chosen = _Picker(model).run()
    except KeyboardInterrupt:  # Ctrl-C before the picker took the keyboard: a quiet quit
        return 0
    if chosen is None:
        return 0
    sys.stdout.write(visible_controls(chosen) + "\n")
    sys.stdout.flush()
    ctx.note(
        _("Resume it with: {command}").format(command=f"hermes-memory sessions resume {chosen}")
    )
    return 0


def _one_line(text: Any, width: int) -> str:
    flat = visible_controls(" ".join(str(text or "").split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _role(role: str) -> str:
    """A message role as a person reads it in their language."""
    labels = {
        "user": _("user"),
        "assistant": _("assistant"),
        "tool": _("tool"),
        "system": _("system"),
    }
    return labels.get(role, role)


def _highlighted(text: str, words: list[str], style: str) -> StyleAndTextTuples:
    """``text`` with every occurrence of ``words`` (case-insensitive) in the hit style."""
    if not words:
        return [(style, text)]
    import re

    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: StyleAndTextTuples = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            out.append((style, text[pos : m.start()]))
        out.append((f"{style} class:match", m.group()))
        pos = m.end()
    if pos < len(text):
        out.append((style, text[pos:]))
    return out


class _Picker:
    """The full-screen application: filter line, list, preview, help line and dialogs."""

    def __init__(self, model: BrowseModel) -> None:
        self.model = model
        self.selected = 0
        self.mode = "filter"  # filter | list | rename | confirm
        self.mode_before_dialog = "filter"  # where a dialog returns to
        self.status = ""
        self._pending = False
        self._generation = 0
        self._preview_key: tuple[str, int | None, str] | None = None
        self._preview: StyleAndTextTuples = []
        self._preview_cursor = 0
        self.app = self._build()

    # ------------------------------------------------------------------ running
    def run(self) -> str | None:
        result: str | None = self.app.run()
        return result

    @property
    def current(self) -> Row | None:
        rows = self.model.rows
        return rows[self.selected] if rows and 0 <= self.selected < len(rows) else None

    def move(self, delta: int) -> None:
        self._flush()  # move among the results of what is typed now
        if self.model.rows:
            self.selected = max(0, min(len(self.model.rows) - 1, self.selected + delta))

    def _typed(self) -> None:
        """The filter text changed: search once the person pauses (latest text wins)."""
        from prompt_toolkit.application import get_app

        self._pending = True
        self._generation += 1
        generation = self._generation

        async def later() -> None:
            import asyncio

            await asyncio.sleep(_DEBOUNCE)
            if generation == self._generation and self._pending:
                self._flush()
                get_app().invalidate()

        get_app().create_background_task(later())

    def _flush(self) -> None:
        """Run the search for the current filter text now, if one is waiting."""
        if self._pending:
            self._pending = False
            self._filter_changed(self.filter_buffer.text)

    def _filter_changed(self, text: str) -> None:
        try:
            self.model.set_query(text)
            self.status = ""
        except Exception as exc:  # a broken connection must not end the picker
            self.status = _("search failed: {error}").format(error=_one_line(exc, 200))
        self.selected = 0

    # ------------------------------------------------------------------ drawing
    def _list_text(self) -> StyleAndTextTuples:
        from hermes_memory_cli._commands.sessions import when

        out: StyleAndTextTuples = []
        for i, row in enumerate(self.model.rows):
            s = row.session
            state = "" if s.get("ended_at") else "*"
            title = _one_line(s.get("title") or "", 200)
            # id, day, messages (* while open) and title; source and time are in the preview
            day = when(s.get("started_at"))[:10]
            line = f" {row.id}  {day:<10} {int(s.get('message_count') or 0):>5}{state:1} {title}"
            style = "class:row.selected" if i == self.selected else "class:row"
            out.append((style, line))
            # An untitled session shows how it began; read only for rows near the screen.
            if not title and abs(i - self.selected) <= _LABELLED_NEAR:
                opening = _one_line(self.model.opening(row.id), 120)
                if opening:
                    out.append((f"{style} class:opening", f"“{opening}”"))
            out.append(("", "\n"))
        if not self.model.rows:
            out.append(("class:dim", " " + _("No session matches the filter.")))
        return out

    def _list_cursor(self) -> Any:
        from prompt_toolkit.data_structures import Point

        return Point(x=0, y=max(0, min(self.selected, len(self.model.rows) - 1)))

    def _preview_text(self) -> StyleAndTextTuples:
        row = self.current
        if row is None:
            self._preview_key, self._preview_cursor = None, 0
            return []
        key = (row.id, row.hit, self.model.query)
        if key != self._preview_key:
            try:
                self._preview, self._preview_cursor = self._render_preview(self.model.preview(row))
            except Exception as exc:
                self._preview = [
                    ("class:error", _("cannot read the session: {error}").format(error=exc))
                ]
                self._preview_cursor = 0
            self._preview_key = key
        return self._preview

    def _render_preview(self, view: Preview) -> tuple[StyleAndTextTuples, int]:
        from hermes_memory_cli._commands.sessions import when

        s = view.session
        words = needles(self.model.query) if view.hit is not None else []
        out: StyleAndTextTuples = []
        lines = 0

        def add(style: str, text: str) -> None:
            nonlocal lines
            out.append((style, text + "\n"))
            lines += 1

        add("class:title", _one_line(s.get("title") or _("(untitled)"), 300))
        add("class:dim", f"{s.get('id')}  {s.get('source') or '-'}  {when(s.get('started_at'))}")
        count = int(s.get("message_count") or 0)
        messages = _("{count} message") if count == 1 else _("{count} messages")
        add("class:dim", messages.format(count=f"{count:,}"))
        add("", "")
        if view.more_before:
            add("class:dim", "  " + _("… earlier messages"))
        cursor = 0
        for msg in view.messages:
            is_hit = msg.get("id") == view.hit
            if is_hit:
                cursor = lines
            marker = "▶ " if is_hit else "  "
            role = str(msg.get("role") or "")
            tool = f" ({msg['tool_name']})" if msg.get("tool_name") else ""
            head = f"{marker}#{msg.get('id')} {when(msg.get('timestamp'))} {_role(role)}{tool}"
            add("class:hit-head" if is_hit else "class:head", head)
            content = str(msg.get("content") or "")
            if role == "tool":  # tool output folded to one line
                if content:
                    add("class:dim", "    " + _one_line(content, 160))
                continue
            body = content.splitlines()
            for text in body[:_MESSAGE_LINES]:
                text = visible_controls(text)[:_LINE_CHARS]
                out.extend(_highlighted("    " + text, words, ""))
                out.append(("", "\n"))
                lines += 1
            if len(body) > _MESSAGE_LINES:
                more = len(body) - _MESSAGE_LINES
                lines_more = _("… {count} more line") if more == 1 else _("… {count} more lines")
                add("class:dim", "    " + lines_more.format(count=more))
            if msg.get("tool_calls"):
                add("class:dim", "    [tool calls] " + _one_line(msg["tool_calls"], 160))
        if view.more_after:
            add("class:dim", "  " + _("… later messages"))
        # the hit in view; without one, the end of the session (where it was left off)
        return out, cursor if view.hit is not None else max(0, lines - 1)

    def _count_text(self) -> StyleAndTextTuples:
        n = len(self.model.rows)
        if self._pending:
            text = _("searching…")
        elif self.model.query.strip():
            text = _("{count} matching").format(count=f"{n:,}")
        elif self.model.truncated:
            text = _("{count} newest").format(count=f"{n:,}")
        else:
            text = (_("{count} session") if n == 1 else _("{count} sessions")).format(
                count=f"{n:,}"
            )
        return [("class:dim", text + " ")]

    def _status_text(self) -> StyleAndTextTuples:
        return [("class:status", " " + self.status)]

    def _help_text(self) -> StyleAndTextTuples:
        if self.mode == "rename":
            keys = _("Enter save · Esc cancel · an empty title clears it")
        elif self.mode == "confirm":
            keys = _("y delete · any other key cancels")
        elif self.mode == "list":
            keys = _("↑↓ move · Enter select · r rename · d delete · / filter · q quit")
        else:
            keys = _("type to filter · ↑↓ move · Enter select · Tab list keys · Esc quit")
        return [("class:help", " " + keys)]

    def _confirm_text(self) -> StyleAndTextTuples:
        row = self.current
        if row is None:
            return []
        title = row.session.get("title")
        named = f"{row.id} ({_one_line(title, 60)})" if title else row.id
        count = int(row.session.get("message_count") or 0)
        question = (
            _("Delete session {session} and its {count} message?")
            if count == 1
            else _("Delete session {session} and its {count} messages?")
        ).format(session=named, count=count)
        return [("", f"{question} "), ("class:dialog.keys", _("[y/N]"))]

    # ------------------------------------------------------------------ actions
    def _start_rename(self) -> None:
        row = self.current
        if row is None:
            return
        self.rename_area.text = str(row.session.get("title") or "")
        self.rename_area.buffer.cursor_position = len(self.rename_area.text)
        self.mode = "rename"
        self.app.layout.focus(self.rename_area)

    def _finish_rename(self) -> None:
        row = self.current
        self._leave_dialog()
        if row is None:
            return
        try:
            title = self.model.rename(row.id, self.rename_area.text)
            self._preview_key = None
        except Exception as exc:  # ValueError (duplicate, too long), a read-only archive
            self.status = _("not renamed: {error}").format(error=_one_line(exc, 200))
            return
        if title is None:
            self.status = _("Cleared the title of {session}.").format(session=row.id)
        else:
            self.status = _("Renamed {session} to {title}.").format(
                session=row.id, title=repr(title)
            )
        self._select(row.id)

    def _finish_delete(self) -> None:
        row = self.current
        self._leave_dialog()
        if row is None:
            return
        try:
            self.model.delete(row.id)
            self._preview_key = None
        except Exception as exc:
            self.status = _("not deleted: {error}").format(error=_one_line(exc, 200))
            return
        self.status = _("Deleted session {session}.").format(session=row.id)
        self.move(0)

    def _leave_dialog(self) -> None:
        self.mode = "list" if self.mode_before_dialog == "list" else "filter"
        self.app.layout.focus(self.list_window if self.mode == "list" else self.filter_window)

    def _select(self, sid: str) -> None:
        for i, row in enumerate(self.model.rows):
            if row.id == sid:
                self.selected = i
                return
        self.move(0)

    # ------------------------------------------------------------------ layout
    def _build(self) -> Any:
        from prompt_toolkit.application import Application, get_app
        from prompt_toolkit.buffer import Buffer
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.layout import (
            ConditionalContainer,
            DynamicContainer,
            Float,
            FloatContainer,
            HSplit,
            Layout,
            VSplit,
            Window,
        )
        from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
        from prompt_toolkit.layout.dimension import Dimension
        from prompt_toolkit.styles import Style
        from prompt_toolkit.widgets import Frame, TextArea

        self.filter_buffer = Buffer(multiline=False, on_text_changed=lambda buf: self._typed())
        self.filter_window = Window(BufferControl(self.filter_buffer), height=1)
        self.list_window = Window(
            FormattedTextControl(
                self._list_text,
                focusable=True,
                show_cursor=False,
                get_cursor_position=self._list_cursor,
            ),
            wrap_lines=False,
            cursorline=False,
        )
        preview_window = Window(
            FormattedTextControl(
                self._preview_text,
                show_cursor=False,
                get_cursor_position=lambda: _point(self._preview_cursor),
            ),
            wrap_lines=True,
        )
        self.rename_area = TextArea(multiline=False)

        def body() -> Any:
            width = get_app().output.get_size().columns
            if width >= _SIDE_BY_SIDE:
                return VSplit(
                    [
                        HSplit([self.list_window], width=Dimension(weight=60)),
                        Window(width=1, char="│", style="class:line"),
                        HSplit([preview_window], width=Dimension(weight=40)),
                    ]
                )
            return HSplit(
                [
                    HSplit([self.list_window], height=Dimension(weight=40)),
                    Window(height=1, char="─", style="class:line"),
                    HSplit([preview_window], height=Dimension(weight=60)),
                ]
            )

        top = VSplit(
            [
                Window(
                    FormattedTextControl([("class:label", " " + _("Filter:") + " ")]),
                    dont_extend_width=True,
                ),
                self.filter_window,
                Window(FormattedTextControl(self._count_text), dont_extend_width=True),
            ],
            height=1,
        )
        in_rename = Condition(lambda: self.mode == "rename")
        in_confirm = Condition(lambda: self.mode == "confirm")
        root = FloatContainer(
            HSplit(
                [
                    top,
                    Window(height=1, char="─", style="class:line"),
                    DynamicContainer(body),
                    ConditionalContainer(
                        Window(FormattedTextControl(self._status_text), height=1),
                        filter=Condition(lambda: bool(self.status)),
                    ),
                    Window(FormattedTextControl(self._help_text), height=1, style="class:bar"),
                ]
            ),
            floats=[
                Float(
                    ConditionalContainer(
                        Frame(
                            self.rename_area,
                            title=lambda: _("New title for {session}").format(
                                session=getattr(self.current, "id", "")
                            ),
                        ),
                        filter=in_rename,
                    ),
                    width=60,
                ),
                Float(
                    ConditionalContainer(
                        Frame(
                            Window(FormattedTextControl(self._confirm_text), wrap_lines=True),
                            title=lambda: _("Delete"),
                        ),
                        filter=in_confirm,
                    ),
                    width=60,
                    height=5,
                ),
            ],
        )
        app: Application[str | None] = Application(
            layout=Layout(root, focused_element=self.filter_window),
            key_bindings=self._bindings(),
            style=Style.from_dict(
                {
                    "row.selected": "reverse bold",
                    "opening": "italic",
                    "match": "reverse",
                    "dim": "ansibrightblack",
                    "title": "bold",
                    "head": "ansibrightblack",
                    "hit-head": "bold",
                    "label": "bold",
                    "line": "ansibrightblack",
                    "bar": "reverse",
                    "status": "bold",
                    "error": "ansired",
                    "dialog.keys": "bold",
                }
            ),
            full_screen=True,
            mouse_support=False,
        )
        app.ttimeoutlen = 0.05  # Esc alone quits without a noticeable wait
        app.timeoutlen = 0.3
        return app

    def _bindings(self) -> KeyBindings:
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()
        browsing = Condition(lambda: self.mode in ("filter", "list"))
        in_list = Condition(lambda: self.mode == "list")
        in_rename = Condition(lambda: self.mode == "rename")
        in_confirm = Condition(lambda: self.mode == "confirm")

        @kb.add("escape", filter=browsing, eager=True)
        @kb.add("c-c", filter=browsing, eager=True)
        @kb.add("q", filter=in_list)
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit(result=None)

        @kb.add("up", filter=browsing, eager=True)
        @kb.add("k", filter=in_list)
        def _up(event: KeyPressEvent) -> None:
            self.move(-1)

        @kb.add("down", filter=browsing, eager=True)
        @kb.add("j", filter=in_list)
        def _down(event: KeyPressEvent) -> None:
            self.move(1)

        @kb.add("pageup", filter=browsing)
        def _page_up(event: KeyPressEvent) -> None:
            self.move(-max(1, event.app.output.get_size().rows // 2))

        @kb.add("pagedown", filter=browsing)
        def _page_down(event: KeyPressEvent) -> None:
            self.move(max(1, event.app.output.get_size().rows // 2))

        @kb.add("home", filter=in_list)
        @kb.add("g", filter=in_list)
        def _first(event: KeyPressEvent) -> None:
            self.selected = 0

        @kb.add("end", filter=in_list)
        @kb.add("G", filter=in_list)
        def _last(event: KeyPressEvent) -> None:
            self.move(len(self.model.rows))

        @kb.add("enter", filter=browsing, eager=True)
        def _pick(event: KeyPressEvent) -> None:
            self._flush()
            row = self.current
            if row is not None:
                event.app.exit(result=row.id)

        @kb.add("tab", filter=browsing)
        def _toggle(event: KeyPressEvent) -> None:
            self.mode = "filter" if self.mode == "list" else "list"
            event.app.layout.focus(self.list_window if self.mode == "list" else self.filter_window)

        @kb.add("/", filter=in_list)
        def _to_filter(event: KeyPressEvent) -> None:
            self.mode = "filter"
            event.app.layout.focus(self.filter_window)

        @kb.add("r", filter=in_list)
        @kb.add("f2", filter=browsing)
        def _rename(event: KeyPressEvent) -> None:
            self._flush()
            self.mode_before_dialog = self.mode
            self._start_rename()

        @kb.add("d", filter=in_list)
        @kb.add("delete", filter=in_list)
        @kb.add("f8", filter=browsing)
        def _delete(event: KeyPressEvent) -> None:
            self._flush()
            if self.current is not None:
                self.mode_before_dialog = self.mode
                self.mode = "confirm"

        @kb.add("enter", filter=in_rename, eager=True)
        def _save(event: KeyPressEvent) -> None:
            self._finish_rename()

        @kb.add("escape", filter=in_rename, eager=True)
        @kb.add("c-c", filter=in_rename, eager=True)
        def _cancel_rename(event: KeyPressEvent) -> None:
            self._leave_dialog()
            self.status = _("Rename cancelled.")

        @kb.add("y", filter=in_confirm)
        @kb.add("Y", filter=in_confirm)
        def _confirm(event: KeyPressEvent) -> None:
            self._finish_delete()

        @kb.add("<any>", filter=in_confirm)
        @kb.add("escape", filter=in_confirm, eager=True)
        def _cancel_delete(event: KeyPressEvent) -> None:
            self._leave_dialog()
            self.status = _("Nothing was deleted.")

        return kb


def _point(y: int) -> Any:
    from prompt_toolkit.data_structures import Point

    return Point(x=0, y=y)
