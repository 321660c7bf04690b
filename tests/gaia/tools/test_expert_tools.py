"""Replays the attacks on the calculator and the unit converter, in a child process with a wall-clock limit, so a
regression fails instead of hanging."""
import json, subprocess, sys
import pytest

pytestmark = [pytest.mark.subprocess, pytest.mark.security]

CALC_PAYLOADS = ["max([[1]*10**7]*10**7)", "[[1]*100000]*100000", "[10**5]*10**8", "[[1]*10**7]*10**7",
                 "9**9**9**9", "9**9**9", "factorial(10**6)", "comb(10**9, 5*10**8)", "perm(10**7)", "round(10**50, -10**9)",
                 "10**60000 * 10**60000", "2**99999 * 2**99999 * 2**99999", "prod([2**90000, 2**90000])",
                 "lcm(2**90000 + 1, 2**90000 - 1)", "1" * 10**6, "(" * 300 + "1" + ")" * 300, "-" * 900 + "1",
                 "sum(" * 100 + "[1]" + ")" * 100, "isqrt(10**(10**6))", "ldexp(1, 10**9)", "(-8) ** 0.5",
                 "sum([1]*10**9)", "max(*[1]*10**8)", "().__class__.__base__.__subclasses__()", "'1' * 10**9"]
CALC_OK = {"1e308*10": "inf", "2**-10**9": "0.0", "2 ** 10": "1024"}
UNIT_PAYLOADS = [("1" * 10**6 + " m", "km"), ("1 m", "k" * 10**6), ("(9**9**9) m", "km"), ("1 m", "m**(9**9**9)"),
                 ("1 m", "((km**9)**9)**9"), ("2**10000000 m", "km"), ("1 m", "kilogram"), ("1 blargs", "m"), ("", "m")]

CHILD = """
import json, sys, time
from gaia_mas.gaia.tools.expert_tools import calculator, unit_converter
out = []
for kind, args in json.load(sys.stdin):
    t = time.perf_counter()
    try: r = "ok: " + (calculator.invoke(args) if kind == "calc" else unit_converter.invoke(dict(quantity=args[0], to_unit=args[1])))
    except ValueError as e: r = "refused: " + str(e)
    out.append([r[:200], round(time.perf_counter() - t, 4)])
print(json.dumps(out))
"""

def run_child(items:list, timeout:float=120) -> list:
    "Evaluate the payloads in a child process capped at 2 GB, which must finish within `timeout` (a stall fails the test)."
    def cap():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))
    p = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(items), capture_output=True, text=True,
                       timeout=timeout, preexec_fn=cap)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)

def test_calculator_payloads_are_refused_quickly():
    out = run_child([["calc", p] for p in CALC_PAYLOADS] + [["calc", p] for p in CALC_OK])
    for p, (r, secs) in zip(CALC_PAYLOADS, out): assert r.startswith("refused: "), (p[:60], r)
    for (p, want), (r, _) in zip(CALC_OK.items(), out[len(CALC_PAYLOADS):]): assert r == f"ok: {want}", (p, r)

def test_calculator_result_text_is_bounded():
    (r, _), = run_child([["calc", "3 ** 60000"]])
    assert r.startswith("ok: ") and "e+" in r and len(r) < 200

def test_unit_converter_refuses_long_or_explosive_input():
    out = run_child([["unit", list(a)] for a in UNIT_PAYLOADS])
    for a, (r, _) in zip(UNIT_PAYLOADS, out): assert r.startswith("refused: "), (a[0][:40], a[1][:40], r)
    assert "characters long" in out[0][0] and "characters long" in out[1][0] and "Powers" in out[2][0]
    assert "Cannot convert" in out[6][0] and "Unknown unit" in out[7][0] and "empty" in out[8][0]
