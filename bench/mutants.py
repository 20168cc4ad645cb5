"""Mutation testing of the core's rule modules (issue 40), with mutmut.

    python -m bench.mutants                      # every rule module, one module at a time
    python -m bench.mutants app/core/compaction/policy.py app/core/compaction/fit.py
    python -m bench.mutants --changed [BASE]     # the rule modules a change touched (BASE: main)
    python -m bench.mutants --score              # the kept results, per module, without running
    python -m bench.mutants --own-tests MODULE   # each mutant against the module's own tests only
    python -m bench.mutants --recheck MODULE     # its mutants not killed, against every test

The rule modules are the ``only_mutate`` patterns of ``[tool.mutmut]`` in pyproject.toml.
mutmut copies the project into ``mutants/`` (git-ignored), runs the tests once to learn which
tests reach which function, then runs those tests against every mutant of the module. A
mutant that survives is a rule no test guards: write the test of the rule at its boundary, or,
when the mutant cannot change behaviour, list it with the reason in
``bench/equivalent_mutants.md``. The run fails when a module scores under ``--min-score``
(killed / mutants, equivalent ones not counted) and names the survivors not listed.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "bench" / "equivalent_mutants.md"
TIKTOKEN_CACHE = ROOT.parent / "shared" / "data" / "tiktoken-cache"


def _mutmut_config() -> dict[str, list[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    config: dict[str, list[str]] = data["tool"]["mutmut"]
    return config


def rule_modules() -> list[str]:
    """The modules mutmut mutates, as paths from the repository's root (as mutmut matches)."""
    config = _mutmut_config()
    only, never = config.get("only_mutate", []), config.get("do_not_mutate", [])
    found = []
    for source in config["source_paths"]:
        for path in sorted((ROOT / source).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if any(fnmatch.fnmatch(name, p) for p in only) and not any(
                fnmatch.fnmatch(name, p) for p in never
            ):
                found.append(name)
    return found


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def changed_modules(base: str) -> list[str]:
    """The rule modules changed since the branch left ``base``: committed, staged, in the work
    tree or new."""
    fork_point = _git("merge-base", base, "HEAD").strip()
    names = set(_git("diff", "--name-only", fork_point).split())
    names |= set(_git("ls-files", "--others", "--exclude-standard").split())
    return [m for m in rule_modules() if m in names]


def equivalent_mutants() -> dict[str, str]:
    """The mutants listed as equivalent: name -> reason (bench/equivalent_mutants.md's table)."""
    listed: dict[str, str] = {}
    if EQUIVALENTS.exists():
        for line in EQUIVALENTS.read_text("utf-8").splitlines():
            match = re.match(r"\|\s*`([\w.ǁ]+__mutmut_\d+)`\s*\|(.*)\|\s*$", line)
            if match:
                listed[match.group(1)] = match.group(2).strip()
    return listed


@dataclass
class ModuleScore:
    module: str
    status: dict[str, str] = field(default_factory=dict)  # mutant -> mutmut's status

    def names(self, status: str) -> list[str]:
        return sorted(n for n, s in self.status.items() if s == status)

    def counts(self, equivalents: dict[str, str]) -> tuple[int, int, int]:
        """(killed, mutants that count, equivalent ones left out)."""
        killed = sum(1 for s in self.status.values() if s in _KILLED)
        equivalent = sum(1 for n, s in self.status.items() if n in equivalents and s not in _KILLED)
        return killed, len(self.status) - equivalent, equivalent


# A timeout is a kill: the mutant made the tests hang (an endless loop), so they noticed it.
_KILLED = {"killed", "timeout", "caught by type check"}


def module_score(module: str) -> ModuleScore:
    from mutmut.stats import status_by_exit_code

    score = ModuleScore(module)
    meta = ROOT / "mutants" / f"{module}.meta"
    if meta.exists():
        codes = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
        score.status = {name: status_by_exit_code[code] for name, code in codes.items()}
    return score


# The tests that exercise a rule module most directly: its mirror in tests/core and the e2e
# tests of its feature. ``--own-tests`` runs a module's mutants against these only (a lower
# bound of the full score, many times faster: the e2e suites of compaction and the rollout reach
# nearly every function). A module not listed uses the tests of its package's mirror folder.
OWN_TESTS: dict[str, tuple[str, ...]] = {
    "app/core/compaction/choose.py": (
        "tests/core/compaction/test_choose.py", "tests/core/compaction/test_compaction_rules.py",
    ),
    "app/core/compaction/pins.py": (
        "tests/core/compaction/test_pins.py", "tests/core/compaction/test_pin_edges.py",
        "tests/e2e/test_pins.py",
    ),
    "app/core/compaction/counting.py": (
        "tests/core/compaction/test_counting.py", "tests/e2e/test_compaction_room.py",
    ),
    "app/core/compaction/summary_edit.py": (
        "tests/core/compaction/", "tests/e2e/test_summary_edit.py",
    ),
    # Reached by the e2e tests only: a compaction run end to end, its paths, pins and edits.
    "app/core/compaction/runner.py": (
        "tests/core/compaction/test_runner.py", "tests/core/session/test_manual_compaction.py",
        "tests/e2e/test_compaction.py", "tests/e2e/test_compaction_room.py",
        "tests/e2e/test_remote_forms.py",
    ),
    "app/core/tokens/calibration.py": (
        "tests/core/tokens/test_calibration.py", "tests/core/tokens/test_calibration_file.py",
        "tests/core/session/test_usage_meter.py",
    ),
    # The error table is read by both providers' clients, whose tests give it its cases.
    "app/core/providers/errors/table.py": (
        "tests/core/providers/", "tests/e2e/test_core_turns.py", "tests/e2e/test_retry_turn.py",
        "tests/e2e/test_waits_and_details.py",
    ),
    # A tool call run: its images and outputs are the MCP and tool-turn tests' end to end.
    "app/core/session/turn/tool_call.py": (
        "tests/core/session/turn/", "tests/e2e/test_mcp_tools.py", "tests/e2e/test_core_turns.py",
    ),
    # A turn's input for an edit or a regeneration: reached by the branch tests end to end.
    "app/core/session/turn/branch_input.py": (
        "tests/core/session/turn/", "tests/e2e/test_branches.py",
        "tests/e2e/test_attachment_branches.py", "tests/e2e/test_branch_faults.py",
    ),
    # The user turn as a task: its records, refusals, failures and branches end to end.
    "app/core/session/turn/task.py": (
        "tests/core/session/turn/", "tests/e2e/test_core_turns.py", "tests/e2e/test_retry_turn.py",
        "tests/e2e/test_storage_faults.py", "tests/e2e/test_attachments.py",
        "tests/e2e/test_branches.py", "tests/e2e/test_compaction.py",
    ),
    "app/core/rollout/reader.py": ("tests/core/rollout/",),
    "app/core/rollout/lines_at.py": ("tests/core/rollout/", "tests/e2e/test_branch_faults.py"),
    "app/core/rollout/writer.py": ("tests/core/rollout/",),
    "app/core/recall/query.py": ("tests/core/recall/",),
    "app/core/recall/index.py": ("tests/core/recall/",),
    "app/core/recall/results.py": ("tests/core/recall/",),
}


# Functions that mutmut's map of tests never shows as reached (``TokenCounter.precount`` and
# what it calls run their work in worker threads, which mutmut's recorder does not follow):
# their mutants would all be "no tests". The test files that reach them are named here and
# added to the map for every run of their module that narrows it (``--own-tests``, and the
# runs by name of ``_restrict_stats``' callers).
UNRECORDED: dict[str, tuple[str, ...]] = {
    f"app.core.tokens.counter.xǁTokenCounterǁ{name}": (
        "tests/core/tokens/test_precount.py", "tests/e2e/test_counting_off_the_loop.py",
        "tests/e2e/test_huge_counts.py",
    )
    for name in ("precount", "precount_items", "_remember", "_remember_huge", "refine")
}


def test_ids(path: str) -> list[str]:
    """The ids pytest gives the test functions of the file at ``path`` (unparametrized)."""
    tree = ast.parse((ROOT / path).read_text("utf-8"))
    return [
        f"{path}::{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]


def own_tests(module: str) -> tuple[str, ...]:
    if module in OWN_TESTS:
        return OWN_TESTS[module]
    package = Path(module).parent.relative_to("app").as_posix()
    return (f"tests/{package}/",)


STATS = ROOT / "mutants" / "mutmut-stats.json"


def _restrict_stats(module: str, prefixes: tuple[str, ...]) -> dict[str, list[str]] | None:
    """Narrow mutmut's map of the tests reaching each function of ``module`` to ``prefixes``;
    returns the map as it was, to put back after the run (None when there are no stats yet)."""
    if not STATS.exists():
        return None
    stats = json.loads(STATS.read_text("utf-8"))
    reaching: dict[str, list[str]] = stats["tests_by_mangled_function_name"]
    dotted = module.removesuffix(".py").replace("/", ".") + "."
    kept = {k: v for k, v in reaching.items() if k.startswith(dotted)}
    for key, files in UNRECORDED.items():
        if key.startswith(dotted):
            kept.setdefault(key, reaching.get(key, []))
            named = (test for path in files for test in test_ids(path))
            reaching[key] = sorted({*reaching.get(key, []), *named})
    for key in kept:
        reaching[key] = [t for t in reaching[key] if t.startswith(prefixes)]
    STATS.write_text(json.dumps(stats), "utf-8")
    return kept


def _restore_stats(kept: dict[str, list[str]]) -> None:
    stats = json.loads(STATS.read_text("utf-8"))
    reaching: dict[str, list[str]] = stats["tests_by_mangled_function_name"]
    for key, tests in kept.items():
        reaching[key] = sorted(set(reaching.get(key, [])) | set(tests))
    STATS.write_text(json.dumps(stats), "utf-8")


def _environment() -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    if "TIKTOKEN_CACHE_DIR" not in env and TIKTOKEN_CACHE.is_dir():
        env["TIKTOKEN_CACHE_DIR"] = str(TIKTOKEN_CACHE)
    # The copy in mutants/ must be what the tests import, not this checkout.
    env.pop("PYTHONPATH", None)
    return env


def has_functions(module: str) -> bool:
    """Whether ``module`` defines a function or method: mutmut mutates nothing else, and
    refuses a run that names a module without one (``recall/results.py`` holds dataclasses)."""
    tree = ast.parse((ROOT / module).read_text("utf-8"))
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in ast.walk(tree))


def run_module(module: str, jobs: int, only_own_tests: bool = False) -> int:
    dotted = module.removesuffix(".py").replace("/", ".")
    if not has_functions(module):
        print(f"== {module}: no function to mutate", flush=True)
        return 0
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), f"{dotted}.*"]
    kept = _restrict_stats(module, own_tests(module)) if only_own_tests else None
    print(f"== {module}: {' '.join(command[1:])}", flush=True)
    if kept is not None:
        print(f"   against its own tests only: {', '.join(own_tests(module))}", flush=True)
    try:
        return subprocess.run(command, check=False, cwd=ROOT, env=_environment()).returncode
    finally:
        if kept is not None:
            _restore_stats(kept)


def recheck_module(module: str, jobs: int) -> int:
    """Run the mutants of ``module`` not killed (nor listed as equivalent) again, against every
    test that reaches them: after an ``--own-tests`` run, what its own tests missed."""
    equivalents = equivalent_mutants()
    score = module_score(module)
    names = [
        n for n, s in sorted(score.status.items()) if s not in _KILLED and n not in equivalents
    ]
    if not names:
        return 0
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *names]
    print(f"== {module}: {len(names)} mutants again, against every test", flush=True)
    return subprocess.run(command, check=False, cwd=ROOT, env=_environment()).returncode


def report(modules: list[str], min_score: float) -> bool:
    """Print each module's score and its survivors not listed as equivalent; True when every
    module reaches ``min_score``."""
    equivalents = equivalent_mutants()
    ok = True
    total_killed = total_counted = 0
    for module in modules:
        score = module_score(module)
        if not score.status:
            print(f"{module}: {'not run yet' if has_functions(module) else 'no function to mutate'}")
            continue
        killed, counted, equivalent = score.counts(equivalents)
        total_killed, total_counted = total_killed + killed, total_counted + counted
        share = killed / counted if counted else 1.0
        passed = share >= min_score
        ok = ok and passed
        unchecked = len(score.names("not checked"))
        checked = counted - unchecked
        partial = (
            f"; {unchecked} not checked yet, {killed}/{checked} of those checked "
            f"({killed / checked if checked else 1.0:.1%})"
            if unchecked
            else ""
        )
        print(
            f"{module}: {killed}/{counted} killed ({share:.1%}), {equivalent} equivalent"
            f"{partial}{'' if passed else f'  UNDER {min_score:.0%}'}"
        )
        for status in ("survived", "no tests", "suspicious", "segfault", "not checked"):
            for name in score.names(status):
                if name not in equivalents:
                    print(f"    {status}: {name}")
    if total_counted:
        print(f"all: {total_killed}/{total_counted} killed ({total_killed / total_counted:.1%})")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.mutants", description=__doc__.split("\n")[0]
    )
    parser.add_argument("modules", nargs="*", help="rule modules to mutate (default: all of them)")
    parser.add_argument(
        "--changed",
        nargs="?",
        const="main",
        metavar="BASE",
        help="only the rule modules changed since the branch left BASE (default main)",
    )
    parser.add_argument("--score", action="store_true", help="report the kept results only")
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="run the mutants not killed again, against every test that reaches them",
    )
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument(
        "--own-tests",
        action="store_true",
        help="run each mutant against its module's own tests only (OWN_TESTS; needs the stats "
        "of a first run)",
    )
    parser.add_argument("--min-score", type=float, default=0.9, help="default 0.9")
    args = parser.parse_args(argv)

    known = rule_modules()
    if args.changed is not None:
        modules = changed_modules(args.changed)
        if not modules:
            print(f"No rule module changed since {args.changed}.")
            return 0
    elif args.modules:
        modules = [Path(m).as_posix() for m in args.modules]
        unknown = [m for m in modules if m not in known]
        if unknown:
            parser.error(f"not a rule module of [tool.mutmut]: {', '.join(unknown)}")
    else:
        modules = known
    if not args.score:
        for module in modules:
            if args.recheck:
                code = recheck_module(module, args.jobs)
            else:
                code = run_module(module, args.jobs, args.own_tests)
            if code != 0:
                print(f"mutmut failed on {module}", file=sys.stderr)
                return 2
    return 0 if report(modules, args.min_score) else 1


if __name__ == "__main__":
    sys.exit(main())
