"""MkDocs hook: the reference pages, generated from the code at every build.

`zant.tools.gen_docs.reference_pages()` builds them from the definitions (IRDL ops, the pass
registry, the argparse parsers, the generated header); this hook adds them to the site in memory
(nothing is written under docs/) and makes the nav's "Reference" section list them, so a new
dialect gets its page without editing mkdocs.yml.
"""

from __future__ import annotations

from mkdocs.structure.files import File

from zant.tools.gen_docs import reference_pages

_pages: dict[str, str] = {}


def on_config(config):
    _pages.clear()
    _pages.update(reference_pages())
    for entry in config.nav or []:
        if isinstance(entry, dict) and "Reference" in entry:
            entry["Reference"] = list(_pages)
    return config


def on_files(files, config):
    for path, text in _pages.items():
        files.append(File.generated(config, path, content=text))
    return files
