"""When a screen's styles must be worked out again. Textual restyles every widget of a screen each
time the screen resumes (a pushed screen just after its widgets were styled as they mounted, a
mode's new screen twice, a screen the player returns to), and reparses every stylesheet whenever a
mode opens: tens of milliseconds each time, wasted unless a stylesheet or the theme changed since
the screen was styled. Here is how to tell (`is_styled`); RidgeApp.refresh_css and every Ridge
screen (`KeepsStyles`) ask it before they restyle."""
from __future__ import annotations

from textual.events import ScreenResume


def css_key(app) -> tuple:
    """What a screen's styles follow from: the theme's variables, the app's classes and pseudo-
    classes (dark or light, focused or not), and every stylesheet that is not a widget type's
    scoped DEFAULT_CSS. A scoped one styles only widgets of its own type, and it is read as the
    first of them mounts (before any is styled), so one read later cannot change a screen already
    styled. Equal keys mean a restyle would change nothing."""
    return (tuple((where, source.content) for where, source in app.stylesheet.source.items() if not source.scope),
            tuple(app.get_css_variables().items()), tuple(sorted(app.classes)), tuple(sorted(app.pseudo_classes)))


def theme_changing(app) -> None:
    """A new theme is set: its variables are the app's at once, but the stylesheet takes them only
    at Textual's next full refresh, so until then nothing counts as styled with them."""
    app.ridge_css_pending = True


def refreshed(app, screens) -> None:
    """Textual's full refresh has run and restyled `screens`: the stylesheet holds the theme's
    variables again."""
    app.ridge_css_pending = False
    key = css_key(app)
    for node in (app, *screens):
        node.ridge_css_key = key


def mark_styled(node) -> None:
    """Note that `node` (a screen, or the app after a full refresh) is styled with the styles in
    force now, or is being styled as its widgets mount (nothing is, while a theme is changing)."""
    node.ridge_css_key = None if getattr(node.app, "ridge_css_pending", False) else css_key(node.app)


def is_styled(screen) -> bool:
    """True when restyling `screen` would change nothing: it was styled with the styles in force
    now, or it is not mounted yet (it is styled as it mounts) and the app's last full refresh
    used them. Never while a theme is changing."""
    if getattr(screen.app, "ridge_css_pending", False):
        return False
    key = css_key(screen.app)
    return (getattr(screen, "ridge_css_key", None) == key
            or (not screen.is_mounted and getattr(screen.app, "ridge_css_key", None) == key))


class KeepsStyles:
    """Mixin for Ridge's screens (before Screen in the bases): a resume restyles the screen only
    when a stylesheet or the theme changed since it was styled. Textual calls each class's own
    handler, so a screen's on_mount and on_screen_resume run as well as these."""

    def on_mount(self) -> None:
        mark_styled(self)  # its widgets were styled as they mounted

    def on_screen_resume(self, event: ScreenResume) -> None:
        if is_styled(self):
            event.refresh_styles = False
        else:
            mark_styled(self)  # Textual's own handler, next, restyles it
