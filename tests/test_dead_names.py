"""The dead-name check of ``make lint`` (tools/dead_names.py)."""

from __future__ import annotations

import textwrap

from _tools import load_tool

dead_names = load_tool("dead_names")


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_definitions_are_the_public_top_level_names(tmp_path):
    module = _write(tmp_path / "m.py", """\
        __all__ = ["used", "Kept"]
        CONSTANT = 1
        _private = 2
        def used(): return CONSTANT
        class Kept:
            def method(self): pass
        """)
    assert [name for name, _ in dead_names.definitions(module)] == ["CONSTANT", "used", "Kept"]


def test_a_use_is_an_import_an_attribute_or_a_string_but_not_all_or_a_re_export(tmp_path):
    caller = _write(tmp_path / "caller.py", """\
        from piilab.x import imported
        import piilab.y as y
        __all__ = ["only_listed"]
        y.attribute
        getattr(y, "by_string")
        local_name = 1
        print(local_name)
        """)
    uses, loads = dead_names.code_uses(caller)
    assert {"imported", "attribute", "by_string"} <= set(uses)
    assert "only_listed" not in uses
    assert "local_name" in loads and "local_name" not in uses


def test_the_repository_has_no_dead_name(capsys):
    assert dead_names.dead_names() == []
    assert dead_names.main([]) == 0
    assert "defined but used nowhere" not in capsys.readouterr().out
