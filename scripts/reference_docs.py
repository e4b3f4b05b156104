"""Write the reference into the pages of docs/ from the code (``make reference-docs``): every text between a page's
generated marks made anew (docs/_ext/flashscale_docs.py says how the marks read, flashscale_reference.py what goes
between them). ``--check`` writes nothing and exits 1 naming each stale page, as tests/test_reference_docs.py does.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import flashscale_docs  # noqa: E402
import flashscale_reference  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs", help="the documentation's folder")
    args = parser.parse_args(argv)
    try:
        stale = flashscale_docs.stale(args.docs)
    except flashscale_reference.ReferenceMismatch as exc:
        print(f"reference-docs: {exc}", file=sys.stderr)
        return 1
    for path, text in stale.items():
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if args.check:
            print(f"{shown} is stale against the code: run {flashscale_docs.COMMAND}", file=sys.stderr)
        else:
            path.write_text(text)
            print(f"{shown}: written")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
