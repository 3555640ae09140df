"""What `moka check` prints says what an engine could not do as a sentence, per view and once at the end."""

from __future__ import annotations

from moka_shell.shells.check.report import CheckReport, ViewReport, lacking


def test_each_view_and_the_report_name_what_the_engine_lacks_as_a_sentence() -> None:
    view = ViewReport(tool="roll_dice", arguments={}, resource_uri="ui://d", profile="moka")
    view.engine_lacks = ["look inside the view's frame, so a view that never sizes itself is a warning", "screenshots"]
    report = CheckReport(server="demo", engine="webview", views=[view],
                         engine_lacks=[lacking("webview", lack) for lack in view.engine_lacks])
    text = report.to_text()
    # Before: "note: look inside the view's frame, …" under the view, with no subject.
    assert "      note: this engine cannot look inside the view's frame, so a view" in text
    assert "      note: this engine cannot take screenshots" in text
    assert "note: the webview engine cannot take screenshots" in text
