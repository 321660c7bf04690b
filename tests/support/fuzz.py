"Property-based fuzzing of the service's OpenAPI operations with schemathesis: positive and negative data, fixed seed."
from typing import Callable


def fuzz_for_5xx(url:str, # the running service
                 key:str, # its API key
                 examples:int, # examples per operation
                 want:Callable=lambda path: True, # which operations, by path
                ) -> tuple[int, int, list]:
    "(operations fuzzed, requests made, the 5xx answers as (operation, status, text))."
    import schemathesis
    from hypothesis import HealthCheck, given, settings, strategies as st
    from schemathesis import GenerationMode
    failures, calls, ops = [], 0, 0
    for result in schemathesis.openapi.from_url(f"{url}/openapi.json").get_all_operations():
        op = result.ok()
        if not want(op.path): continue
        ops += 1
        strategy = st.one_of(op.as_strategy(GenerationMode.POSITIVE), op.as_strategy(GenerationMode.NEGATIVE))

        @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=strategy)
        def run(case):
            nonlocal calls
            calls += 1
            r = case.call(headers={"X-API-Key": key}, timeout=60)
            if r.status_code >= 500: failures.append((op.label, r.status_code, r.text[:200]))
        run()
    return ops, calls, failures
