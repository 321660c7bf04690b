"""Write the sample knowledge-base collection (docs/) and its golden questions (golden.jsonl).

Every document is written here once as data and rendered to Markdown, HTML, PDF or Word, so the
collection is reproducible: `python nbs/samples/kb/make_docs.py` rewrites the same bytes.
PDF and Word files get their metadata from a sidecar NAME.meta.json, which the ingester reads.
"""
import io, json, textwrap, zipfile
from html import escape
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE/"docs"

# (file name, title, metadata, [(section heading, body)]); bodies may hold ```code``` blocks (Markdown/HTML only)
DOCS = [
("circuit-breakers.md", "Circuit breakers", dict(team="platform", year=2021, level="intro", tags=["circuit-breaker", "fault-tolerance"], service="gateway"), [
 ("What a circuit breaker is", "A circuit breaker is a proxy in front of a remote call that watches its failures. When the failure rate crosses a threshold it opens and fails calls fast, without touching the struggling dependency, which gives that dependency room to recover and keeps callers from piling up threads waiting on it."),
 ("Closed, open and half-open states", "In the closed state calls pass through and failures are counted in a rolling window. When failures exceed the threshold (for example 50% of the last 20 calls) the breaker moves to open and rejects calls immediately with a fallback or an error. After a cool-down period it moves to half-open and lets a few trial calls through: if they succeed it closes again, if any fails it opens for another cool-down."),
 ("Half-open state", "The half-open state is the breaker's probe. Allowing only a small number of concurrent trial calls matters: letting all traffic through at once would knock a recovering service over again. Record the trial outcomes separately from the closed-state window."),
 ("Choosing thresholds", "Base the threshold on the error rate and a minimum number of calls, never on a single failure. Count timeouts as failures. Keep the cool-down short (5 to 30 seconds) and export the breaker state as a metric so operators see when it trips."),
]),
("circuit-breaker-python.md", "Implementing a circuit breaker in Python", dict(team="platform", year=2023, level="advanced", tags=["circuit-breaker", "code", "python"], service="gateway"), [
 ("Overview", "This guide implements the circuit breaker pattern for a Python microservice that calls another service over HTTP. The breaker wraps the call, counts failures and switches between closed, open and half-open states."),
 ("The breaker class", "```python\nimport time, threading\n\nclass CircuitBreaker:\n    def __init__(self, max_failures=5, reset_after=30.0):\n        self.max_failures, self.reset_after = max_failures, reset_after\n        self.failures, self.opened_at = 0, None\n        self.lock = threading.Lock()\n\n    def call(self, fn, *args, **kwargs):\n        with self.lock:\n            if self.opened_at is not None:\n                if time.monotonic() - self.opened_at < self.reset_after:\n                    raise RuntimeError('circuit open: failing fast')\n                # half-open: let this one trial call through\n        try:\n            result = fn(*args, **kwargs)\n        except Exception:\n            with self.lock:\n                self.failures += 1\n                if self.failures >= self.max_failures:\n                    self.opened_at = time.monotonic()\n            raise\n        with self.lock:\n            self.failures, self.opened_at = 0, None\n        return result\n```"),
 ("Using it in a microservice", "Create one breaker per downstream dependency, not per request, and share it across threads. Wrap the HTTP client call and return a cached or default response when the breaker is open:\n\n```python\ninventory_breaker = CircuitBreaker(max_failures=5, reset_after=20)\n\ndef stock_level(sku):\n    try:\n        return inventory_breaker.call(http_get, f'http://inventory/stock/{sku}', timeout=0.5)\n    except RuntimeError:\n        return {'sku': sku, 'stock': None, 'stale': True}\n```"),
 ("Libraries", "In production prefer a maintained library: pybreaker for Python, resilience4j for Java, Polly for .NET, or the outlier detection of a service mesh such as Envoy or Istio."),
]),
("circuit-breaker-java.html", "Circuit breakers with resilience4j", dict(team="payments", year=2022, level="intermediate", tags=["circuit-breaker", "code", "java"], service="checkout"), [
 ("Configuration", "resilience4j configures a breaker with a sliding window, a failure-rate threshold and the wait duration in the open state. The payments team uses a count-based window of 50 calls and a 40% threshold for the card processor."),
 ("Code example", "```java\nCircuitBreakerConfig config = CircuitBreakerConfig.custom()\n    .failureRateThreshold(40)\n    .slidingWindowSize(50)\n    .waitDurationInOpenState(Duration.ofSeconds(15))\n    .permittedNumberOfCallsInHalfOpenState(3)\n    .build();\nCircuitBreaker breaker = CircuitBreaker.of(\"card-processor\", config);\nSupplier<Receipt> guarded = CircuitBreaker.decorateSupplier(breaker, () -> processor.charge(order));\n```"),
 ("Fallbacks", "When the breaker is open the checkout service queues the charge for a later retry and tells the customer the payment is pending, instead of showing an error page."),
]),
("load-balancing.md", "Load balancing", dict(team="platform", year=2020, level="intro", tags=["load-balancing", "traffic"], service="gateway"), [
 ("What load balancing does", "A load balancer spreads requests across several instances of a service so that no single instance is overloaded, and it removes unhealthy instances from rotation using health checks. It improves both capacity and availability."),
 ("Algorithms", "Round robin sends each request to the next instance in turn. Least connections picks the instance with the fewest open requests, which copes better with uneven request costs. Weighted variants favour larger instances. Consistent hashing maps a key such as a user id to the same instance, which helps caches. The power of two choices picks two random instances and sends the request to the less loaded one, almost as good as least connections with far less coordination."),
 ("Layer 4 and layer 7", "Layer 4 balancers route TCP connections and cannot see requests. Layer 7 balancers understand HTTP, so they can route by path or header, retry idempotent requests and balance individual requests over long-lived HTTP/2 connections."),
]),
("client-side-load-balancing.html", "Client-side load balancing", dict(team="search", year=2023, level="advanced", tags=["load-balancing", "service-discovery"], service="catalog"), [
 ("Why balance in the client", "With client-side load balancing each caller keeps the list of healthy instances from service discovery and picks one itself. There is no extra network hop and no central balancer to scale, at the cost of putting balancing logic in every client library."),
 ("Least-loaded picking", "The search clients track outstanding requests per instance and use the power of two choices. Instances that return errors are ejected for a short period, a form of outlier detection."),
 ("Pitfalls", "Clients with stale instance lists send traffic to removed instances; refresh the list often and treat connection errors as a signal to refresh."),
]),
("comparing-circuit-breakers-and-load-balancing.md", "Circuit breakers and load balancing compared", dict(team="sre", year=2024, level="intermediate", tags=["circuit-breaker", "load-balancing", "comparison"], service="gateway"), [
 ("Different problems", "A load balancer decides where a request goes among healthy instances; a circuit breaker decides whether a request should be sent at all. Load balancing spreads load to use capacity; a circuit breaker sheds calls to a failing dependency to protect the caller and give the dependency time to recover."),
 ("How they work together", "Load balancers remove individual bad instances through health checks and outlier detection, while a breaker reacts when the whole dependency is failing. In a service mesh both live in the sidecar proxy: Envoy's outlier detection ejects single hosts, and its circuit breaking limits connections and pending requests per cluster."),
 ("Which to reach for", "Use load balancing whenever a service has more than one instance. Add circuit breakers around remote calls whose failure would otherwise exhaust the caller's threads or connections."),
]),
("retries-and-backoff.md", "Retries with exponential backoff", dict(team="platform", year=2021, level="intro", tags=["retries", "backoff"], service="gateway"), [
 ("When to retry", "Retry only transient failures: timeouts, connection resets, HTTP 429, 502, 503 and 504. Do not retry 400-class client errors, and only retry operations that are idempotent or carry an idempotency key."),
 ("Exponential backoff with jitter", "Wait longer after each failed attempt, doubling a base delay up to a cap, and add random jitter so that many clients do not retry in lockstep. Full jitter picks the delay uniformly between zero and the exponential bound."),
 ("Code example", "```python\nimport random, time\n\ndef call_with_retries(fn, attempts=5, base=0.2, cap=5.0):\n    for attempt in range(attempts):\n        try:\n            return fn()\n        except TransientError:\n            if attempt == attempts - 1:\n                raise\n            time.sleep(random.uniform(0, min(cap, base * 2 ** attempt)))\n```"),
 ("Retry budgets", "Limit retries to a budget, for example 10% of requests per client, so that retries cannot multiply load during an outage. Retry at one layer only: retries at every layer of a deep call chain multiply."),
]),
("retry-storms.html", "Retry storms", dict(team="sre", year=2022, level="advanced", tags=["retries", "incident"], service="checkout"), [
 ("What happened", "During the March incident the checkout service slowed down, clients timed out and retried three times, and the gateway also retried three times. Load on checkout grew nine-fold and it never recovered until traffic was cut."),
 ("Why retries amplify", "Each layer that retries multiplies the attempts of the layers above it. Without jitter, retries arrive in synchronized waves."),
 ("Remediation", "We moved retries to the edge only, added a retry budget, added jitter, and placed a circuit breaker in front of checkout so that the gateway fails fast when checkout is overloaded."),
]),
("timeouts.md", "Timeouts and deadlines", dict(team="platform", year=2020, level="intro", tags=["timeouts", "deadlines"], service="gateway"), [
 ("Always set a timeout", "Every network call needs a timeout; the default in many clients is to wait forever, which turns a slow dependency into exhausted threads in every caller."),
 ("Choosing a value", "Set the timeout from the dependency's latency distribution, a little above its p99, not from a guess. Use separate connect and read timeouts."),
 ("Deadline propagation", "Pass a deadline rather than a timeout down a call chain: each service computes the time left and gives up when it runs out, so no service keeps working on a request whose caller has already given up. gRPC propagates deadlines automatically."),
]),
("bulkheads.md", "Bulkheads", dict(team="payments", year=2021, level="intermediate", tags=["bulkhead", "isolation"], service="checkout"), [
 ("The idea", "A bulkhead isolates resources per dependency or per tenant, like the watertight compartments of a ship, so that one failing part cannot sink the whole service. A slow fraud-check service should exhaust only the threads reserved for fraud checks."),
 ("Implementations", "Use separate thread pools or connection pools per dependency, or semaphores that cap concurrent calls. In Kubernetes, separate deployments for critical and batch traffic are a bulkhead at the process level."),
 ("Code example", "```python\nimport threading\n\nfraud_slots = threading.BoundedSemaphore(10)\n\ndef check_fraud(order):\n    if not fraud_slots.acquire(timeout=0.05):\n        return 'skipped'  # bulkhead full: degrade instead of queueing\n    try:\n        return fraud_client.check(order)\n    finally:\n        fraud_slots.release()\n```"),
]),
("rate-limiting.md", "Rate limiting", dict(team="platform", year=2022, level="intermediate", tags=["rate-limiting", "traffic"], service="gateway"), [
 ("Why limit", "Rate limiting protects a service from overload and abusive clients and shares capacity fairly between tenants. Over the limit the service answers HTTP 429 with a Retry-After header."),
 ("Token bucket", "A token bucket holds up to a burst of tokens and refills at a steady rate; each request takes a token. It allows short bursts while enforcing an average rate.\n\n```python\nimport time\n\nclass TokenBucket:\n    def __init__(self, rate, burst):\n        self.rate, self.burst = rate, burst\n        self.tokens, self.last = burst, time.monotonic()\n\n    def allow(self):\n        now = time.monotonic()\n        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)\n        self.last = now\n        if self.tokens >= 1:\n            self.tokens -= 1\n            return True\n        return False\n```"),
 ("Other algorithms", "A leaky bucket smooths traffic to a constant output rate. Fixed windows are simple but allow double bursts at window edges; sliding windows fix that at some memory cost."),
 ("Distributed limits", "With many gateway instances keep counters in a shared store such as Redis, or give each instance a share of the global limit."),
]),
("load-shedding.html", "Load shedding", dict(team="sre", year=2023, level="advanced", tags=["load-shedding", "overload"], service="catalog"), [
 ("Shed before you fall over", "Load shedding rejects some requests early when a service is near capacity, so the requests it accepts still succeed within their deadlines. It is better to serve 80% of traffic well than 100% badly."),
 ("Signals", "Shed on concurrency (in-flight requests), queue time or CPU, not only on request rate. Drop requests that have waited longer than their deadline before doing any work."),
 ("Priorities", "Give each request a priority: keep checkout and login, shed recommendations and analytics first."),
]),
("backpressure.md", "Backpressure", dict(team="search", year=2022, level="advanced", tags=["backpressure", "queues"], service="indexer"), [
 ("Definition", "Backpressure is a consumer telling its producer to slow down. Without it, a fast producer fills unbounded queues until memory runs out or latency explodes."),
 ("Bounded queues", "Use bounded queues between stages. When a queue is full, block the producer, drop the oldest or newest items, or reject with an error, and choose deliberately."),
 ("In streaming systems", "Reactive Streams, Kafka consumer lag and TCP flow control are all forms of backpressure. The indexer pauses reading from Kafka when its write buffer is full."),
]),
("service-discovery.md", "Service discovery", dict(team="platform", year=2019, level="intro", tags=["service-discovery"], service="registry"), [
 ("The problem", "Instances of a service come and go with deploys and autoscaling, so callers cannot hard-code addresses. Service discovery keeps a registry of healthy instances."),
 ("Client-side and server-side discovery", "In client-side discovery the caller queries the registry (Consul, Eureka, etcd) and picks an instance. In server-side discovery the caller talks to a load balancer or DNS name and the platform routes, as Kubernetes Services do."),
 ("Registration and health", "Instances register on start and are removed when they fail health checks or stop renewing a lease, so the registry does not hand out dead addresses."),
]),
("health-checks.html", "Health checks", dict(team="sre", year=2021, level="intro", tags=["health-checks", "kubernetes"], service="gateway"), [
 ("Liveness and readiness", "A liveness check answers whether the process should be restarted; a readiness check answers whether it should receive traffic now. Kubernetes restarts containers that fail liveness and removes pods that fail readiness from Service endpoints."),
 ("What to check", "Keep liveness shallow: the process responds. Readiness may check that required local resources are ready, but should not fail because a shared downstream dependency is down, or every instance goes unready at once."),
 ("Startup probes", "Slow-starting services need a startup probe so that liveness checks do not kill them before they finish warming up."),
]),
("caching-strategies.md", "Caching strategies", dict(team="search", year=2021, level="intermediate", tags=["caching"], service="catalog"), [
 ("Cache-aside", "In cache-aside the application reads the cache first and on a miss loads from the database and fills the cache. It is the most common pattern and keeps the cache optional."),
 ("Write-through and write-behind", "Write-through updates cache and database together on every write; write-behind writes to the cache and flushes to the database later, faster but riskier."),
 ("Expiry and invalidation", "Give every entry a time to live, add jitter to expiry times, and invalidate on writes where staleness matters. Serve stale data while revalidating to hide refresh latency."),
]),
("cache-stampede.html", "Preventing cache stampedes", dict(team="search", year=2024, level="advanced", tags=["caching", "incident"], service="catalog"), [
 ("The stampede", "When a popular entry expires, many requests miss at once and all hit the database together: a cache stampede, or thundering herd."),
 ("Request coalescing", "Let only one request recompute a missing key while the others wait for its result (single flight), or hold a short lock per key."),
 ("Early refresh", "Refresh entries probabilistically before they expire, and keep serving the stale value while one worker refreshes it."),
]),
("idempotency.md", "Idempotency keys", dict(team="payments", year=2022, level="intermediate", tags=["idempotency", "retries"], service="checkout"), [
 ("Why it matters", "Retries are only safe when repeating a request has the same effect as doing it once. A retried payment without protection can charge a customer twice."),
 ("Idempotency keys", "The client generates a unique key per logical operation and sends it with each attempt. The server stores the key with the result and, when the key repeats, returns the stored result instead of executing again."),
 ("Storage and expiry", "Store keys in the same transaction as the effect, keep them at least as long as clients may retry (24 hours for payments), and reject a reused key with a different request body."),
]),
("graceful-degradation.html", "Graceful degradation and fallbacks", dict(team="mobile", year=2023, level="intro", tags=["fallbacks", "degradation"], service="recommendations"), [
 ("Degrade, do not fail", "When a non-critical dependency fails, the product should keep working with less: show popular items when personalised recommendations are down, hide the reviews widget rather than the whole page."),
 ("Fallback options", "Serve cached or default values, use a simpler algorithm, or skip the feature. Make fallbacks cheap and test them regularly, since a fallback that is never exercised tends to be broken when needed."),
]),
("service-mesh.md", "Service mesh resilience features", dict(team="platform", year=2024, level="advanced", tags=["service-mesh", "circuit-breaker", "retries"], service="mesh"), [
 ("What a mesh provides", "A service mesh such as Istio or Linkerd puts a proxy beside every service and moves retries, timeouts, circuit breaking, mutual TLS and load balancing out of application code into configuration."),
 ("Outlier detection", "Envoy's outlier detection ejects hosts that return consecutive 5xx errors for a growing ejection time, which acts as a per-host circuit breaker."),
 ("Caution", "Mesh retries stack with application retries; configure retries in one place only."),
]),
("chaos-engineering.md", "Chaos engineering", dict(team="sre", year=2023, level="intermediate", tags=["chaos", "testing"], service="platform"), [
 ("Principle", "Chaos engineering runs controlled experiments that inject failures, such as killed instances, added latency or dropped packets, to check that resilience mechanisms work before a real outage tests them."),
 ("Running an experiment", "State a hypothesis about steady-state metrics, limit the blast radius, run in production with an abort switch, and fix what breaks."),
]),
("sre-slos.md", "Service level objectives", dict(team="sre", year=2020, level="intro", tags=["slo", "monitoring"], service="platform"), [
 ("SLIs and SLOs", "A service level indicator measures user experience, such as the fraction of requests served under 300 ms. An objective sets the target, for example 99.9% over 28 days."),
 ("Error budgets", "The error budget is what the objective allows to fail. While budget remains, teams ship; when it is spent, they prioritise reliability work."),
]),
("queue-based-load-leveling.md", "Queue-based load leveling", dict(team="payments", year=2024, level="intermediate", tags=["queues", "backpressure"], service="notifications"), [
 ("Pattern", "Put a queue between a bursty producer and a service with fixed capacity; the service consumes at its own pace, and bursts become queue depth instead of overload."),
 ("Limits", "Queues add latency and need bounds and monitoring of their depth; a queue that keeps growing hides an overloaded consumer."),
]),
("autoscaling.html", "Autoscaling", dict(team="platform", year=2022, level="intermediate", tags=["autoscaling", "capacity"], service="gateway"), [
 ("Reactive scaling", "Horizontal autoscalers add instances when CPU, request rate or queue depth passes a target. Scaling takes minutes, so it cannot absorb sudden spikes alone: combine it with rate limiting and load shedding."),
 ("Predictive and scheduled scaling", "Scale ahead of known peaks such as sales events, and keep headroom for the time new instances take to start."),
]),
("blue-green-and-canary.md", "Blue-green and canary deployments", dict(team="mobile", year=2021, level="intro", tags=["deployment"], service="api"), [
 ("Blue-green", "Run the new version beside the old one and switch traffic at once; switching back is instant if something breaks."),
 ("Canary", "Send a small share of traffic, say 5%, to the new version, compare its error rate and latency with the old one, and widen the share step by step or roll back automatically."),
]),
("consistent-hashing.pdf", "Consistent hashing", dict(team="search", year=2020, level="advanced", tags=["load-balancing", "caching", "sharding"], service="cache"), [
 ("", "Consistent hashing places servers and keys on a ring and assigns each key to the next server clockwise. Adding or removing a server moves only the keys of its neighbour segment, about 1/n of all keys, instead of remapping nearly every key as modulo hashing does."),
 ("", "Virtual nodes give each server many points on the ring, which evens out load. Bounded-load variants cap each server at a multiple of the average load, which keeps hot keys from overloading one cache node."),
]),
("timeout-budgets.pdf", "Timeout budgets in call chains", dict(team="payments", year=2023, level="advanced", tags=["timeouts", "deadlines", "retries"], service="checkout"), [
 ("", "A request that enters checkout with a 2 second budget must share it among inventory, pricing and payment calls. Each hop subtracts its own work and passes the remaining deadline on."),
 ("", "Retries must fit inside the budget: two attempts of 800 ms cannot follow a 1 second call. Hedged requests, which send a second attempt after the p95 latency, cut tail latency but add load, so cap them at a small percentage of traffic."),
]),
("incident-review-checkout.pdf", "Incident review: checkout outage", dict(team="payments", year=2024, level="intermediate", tags=["incident", "circuit-breaker", "timeouts"], service="checkout"), [
 ("", "Summary: for 42 minutes checkout returned errors for 30% of orders. The fraud-check provider slowed to 8 second responses, checkout had no timeout on that call, and its worker threads were all blocked."),
 ("", "Actions: add a 700 ms timeout to the fraud call, put a circuit breaker around it with a fallback that approves low-value orders and queues the rest for review, and isolate the fraud calls in their own bulkhead."),
]),
("dns-failover.pdf", "DNS failover between regions", dict(team="sre", year=2019, level="intermediate", tags=["failover", "multi-region"], service="edge"), [
 ("", "Regional failover moves traffic from an unhealthy region by changing DNS answers based on health checks. Keep TTLs low, around 60 seconds, and remember that some resolvers ignore TTLs."),
 ("", "Active-active setups serve from both regions all the time, so failover only shifts load; each region needs the capacity to carry the other's traffic."),
]),
("resilience-checklist.docx", "Resilience checklist for new services", dict(team="platform", year=2025, level="intro", tags=["checklist", "timeouts", "retries", "circuit-breaker"], service="platform"), [
 ("Calls to other services", "Every outbound call has a timeout below the caller's deadline. Retries only for transient errors, with exponential backoff and jitter, within a retry budget. A circuit breaker around each critical dependency, with a tested fallback."),
 ("Capacity", "Rate limits at the edge, load shedding at saturation, bulkheads between critical and optional work, and autoscaling with headroom."),
 ("Operations", "Liveness and readiness probes, SLOs with alerts on the error budget, and a runbook for each dependency failure."),
]),
("outlier-detection.docx", "Outlier detection", dict(team="search", year=2024, level="advanced", tags=["load-balancing", "circuit-breaker"], service="catalog"), [
 ("Ejecting bad hosts", "Outlier detection watches each upstream host's errors and latency and temporarily removes hosts that behave much worse than their peers. It complements active health checks by reacting to real traffic."),
 ("Settings", "Eject after five consecutive errors, for 30 seconds at first and longer on repeat ejections, and never eject more than half of the hosts at once, so the cluster keeps serving."),
]),
("rate-limits-for-partners.docx", "Rate limits for partner APIs", dict(team="payments", year=2025, level="intro", tags=["rate-limiting", "api"], service="partner-api"), [
 ("Quotas", "Each partner gets a quota of 100 requests per second with bursts of 200, enforced by a token bucket per API key at the gateway."),
 ("Telling clients", "Over the limit, the API answers 429 Too Many Requests with a Retry-After header; clients must back off with jitter and not retry immediately."),
]),
("timeouts-in-go.docx", "Timeouts in Go services", dict(team="platform", year=2022, level="intermediate", tags=["timeouts", "code", "go"], service="gateway"), [
 ("Context deadlines", "In Go, pass a context.Context with a deadline to every outbound call: ctx, cancel := context.WithTimeout(parent, 500*time.Millisecond); defer cancel(). The HTTP client and gRPC stop work when the context is done."),
 ("Server timeouts", "Set ReadTimeout, WriteTimeout and IdleTimeout on http.Server; the zero values mean no timeout at all, which lets slow clients hold connections forever."),
]),
]

GOLDEN = [
("What is a circuit breaker?", ["circuit-breakers.md"], "A proxy around a remote call that counts failures and, past a threshold, opens to fail calls fast so the dependency can recover; after a cool-down it half-opens to probe and closes again on success."),
("Compare circuit breakers and load balancing", ["comparing-circuit-breakers-and-load-balancing.md", "circuit-breakers.md", "load-balancing.md"], "Load balancing chooses which healthy instance gets a request to spread load; a circuit breaker decides whether to call a failing dependency at all, shedding calls to protect the caller. They work together, e.g. in a service mesh."),
("Explain how to implement circuit breaker pattern in microservices with code examples", ["circuit-breaker-python.md", "circuit-breaker-java.html"], "Wrap each downstream call in one shared breaker per dependency that counts failures, opens after a threshold, fails fast with a fallback and lets trial calls through after a reset period; Python class and resilience4j examples."),
("What happens in the half-open state of a circuit breaker?", ["circuit-breakers.md"], "After the cool-down a few trial calls pass; success closes the breaker, a failure opens it again."),
("How should circuit breaker thresholds be chosen?", ["circuit-breakers.md"], "On error rate with a minimum number of calls, counting timeouts as failures, with a short cool-down and the state exported as a metric."),
("Which libraries implement circuit breakers?", ["circuit-breaker-python.md"], "pybreaker, resilience4j, Polly, and service-mesh outlier detection (Envoy, Istio)."),
("How does the payments team configure resilience4j for the card processor?", ["circuit-breaker-java.html"], "Count-based sliding window of 50 calls, 40% failure-rate threshold, 15 s wait in open state, 3 calls in half-open."),
("What load balancing algorithms exist?", ["load-balancing.md"], "Round robin, least connections, weighted variants, consistent hashing and the power of two choices."),
("What is the power of two choices?", ["load-balancing.md", "client-side-load-balancing.html"], "Pick two random instances and send the request to the less loaded one."),
("Difference between layer 4 and layer 7 load balancers", ["load-balancing.md"], "L4 routes TCP connections without seeing requests; L7 understands HTTP and can route by path or header and balance individual requests."),
("What are the pros and cons of client-side load balancing?", ["client-side-load-balancing.html"], "No extra hop or central balancer, but logic in every client and a risk of stale instance lists."),
("Which errors should be retried?", ["retries-and-backoff.md"], "Transient ones: timeouts, connection resets, 429, 502, 503, 504; not 4xx client errors, and only idempotent operations."),
("How do I implement exponential backoff with jitter?", ["retries-and-backoff.md"], "Double a base delay per attempt up to a cap and sleep a random time between zero and that bound (full jitter)."),
("What is a retry budget?", ["retries-and-backoff.md", "retry-storms.html"], "A cap on retries such as 10% of requests so retries cannot multiply load during an outage."),
("Why do retries at every layer cause retry storms?", ["retry-storms.html", "retries-and-backoff.md"], "Each retrying layer multiplies attempts of the layers above; three by three gave nine-fold load."),
("What did the team change after the retry storm incident?", ["retry-storms.html"], "Retries only at the edge, a retry budget, jitter, and a circuit breaker in front of checkout."),
("Why must every network call have a timeout?", ["timeouts.md"], "Default clients may wait forever, so a slow dependency exhausts threads in every caller."),
("How should I choose a timeout value?", ["timeouts.md"], "From the dependency's latency distribution, slightly above p99, with separate connect and read timeouts."),
("What is deadline propagation?", ["timeouts.md", "timeout-budgets.pdf"], "Pass the remaining deadline down the call chain so each service stops when time runs out."),
("How do retries fit in a timeout budget?", ["timeout-budgets.pdf"], "Retries must fit within the remaining budget; hedged requests cut tail latency but must be capped."),
("What is the bulkhead pattern?", ["bulkheads.md"], "Isolating resources per dependency or tenant so one failing part cannot exhaust everything."),
("How can I implement a bulkhead with a semaphore?", ["bulkheads.md"], "Cap concurrent calls with a bounded semaphore and degrade when it is full."),
("How does a token bucket rate limiter work?", ["rate-limiting.md"], "Tokens refill at a steady rate up to a burst size; each request takes one, allowing bursts but enforcing an average rate."),
("Compare token bucket, leaky bucket and fixed window rate limiting", ["rate-limiting.md"], "Token bucket allows bursts; leaky bucket smooths to constant output; fixed windows allow double bursts at edges; sliding windows fix that."),
("What should an API return when a client exceeds the rate limit?", ["rate-limiting.md", "rate-limits-for-partners.docx"], "HTTP 429 Too Many Requests with a Retry-After header."),
("What quota do partner APIs have?", ["rate-limits-for-partners.docx"], "100 requests per second with bursts of 200, by token bucket per API key."),
("What is load shedding and when should it happen?", ["load-shedding.html"], "Rejecting some requests early near capacity so accepted ones succeed; shed on concurrency, queue time or CPU, low priority first."),
("What is backpressure?", ["backpressure.md"], "A consumer telling its producer to slow down, with bounded queues instead of unbounded ones."),
("How does service discovery work?", ["service-discovery.md"], "A registry of healthy instances; client-side discovery queries it (Consul, Eureka), server-side goes through a load balancer or DNS such as Kubernetes Services."),
("Difference between liveness and readiness probes", ["health-checks.html"], "Liveness decides restarts; readiness decides whether the instance receives traffic."),
("Should a readiness check fail when a downstream dependency is down?", ["health-checks.html"], "No; otherwise every instance goes unready at once."),
("What caching strategies are there?", ["caching-strategies.md"], "Cache-aside, write-through, write-behind, with TTLs, jitter and invalidation."),
("How do I prevent a cache stampede?", ["cache-stampede.html"], "Request coalescing (single flight) or per-key locks, and early probabilistic refresh while serving stale values."),
("Why are idempotency keys needed for payments?", ["idempotency.md"], "So retries do not charge twice: the server stores the key with the result and returns it on repeats."),
("How long should idempotency keys be kept?", ["idempotency.md"], "At least as long as clients may retry, 24 hours for payments."),
("What is graceful degradation?", ["graceful-degradation.html"], "Keeping the product working with less when a non-critical dependency fails, through cached or default values."),
("What resilience features does a service mesh provide?", ["service-mesh.md"], "Retries, timeouts, circuit breaking, mutual TLS and load balancing in a sidecar proxy, plus outlier detection."),
("What is outlier detection?", ["outlier-detection.docx", "service-mesh.md"], "Temporarily ejecting hosts whose errors or latency are much worse than their peers, never more than half of them."),
("What is chaos engineering?", ["chaos-engineering.md"], "Controlled experiments that inject failures to verify resilience, with a hypothesis and a limited blast radius."),
("What is an error budget?", ["sre-slos.md"], "The share of failures an SLO allows; when it is spent teams prioritise reliability."),
("What is queue-based load leveling?", ["queue-based-load-leveling.md"], "A queue between a bursty producer and a fixed-capacity service so bursts become queue depth."),
("Why can't autoscaling alone absorb traffic spikes?", ["autoscaling.html"], "Scaling takes minutes; combine it with rate limiting and load shedding."),
("What is a canary deployment?", ["blue-green-and-canary.md"], "Sending a small share of traffic to the new version and widening it while metrics stay healthy."),
("How does consistent hashing reduce remapping?", ["consistent-hashing.pdf"], "Only keys of the neighbouring ring segment move, about 1/n, and virtual nodes even out load."),
("What caused the checkout outage?", ["incident-review-checkout.pdf"], "The fraud-check provider slowed to 8 s responses and checkout had no timeout, so all worker threads blocked."),
("How does DNS failover between regions work?", ["dns-failover.pdf"], "Health-checked DNS answers move traffic away from an unhealthy region; keep TTLs low."),
("What should a new service have before launch?", ["resilience-checklist.docx"], "Timeouts, retries with backoff within a budget, circuit breakers with fallbacks, rate limits, load shedding, bulkheads, probes, SLOs and runbooks."),
("How do I set timeouts in Go?", ["timeouts-in-go.docx"], "context.WithTimeout on every outbound call and ReadTimeout, WriteTimeout and IdleTimeout on http.Server."),
]


def md(title, meta, secs):
    front = "".join(f"{k}: {json.dumps(v)}\n" for k, v in meta.items())
    body = "".join(f"\n## {h}\n\n{b}\n" for h, b in secs)
    return f"---\n{front}---\n# {title}\n{body}"

def html_block(text):
    out = []
    for i, part in enumerate(text.split("```")):
        if i % 2:  # a code block: first line is the language
            lang, _, code = part.partition("\n")
            out.append(f'<pre><code class="language-{escape(lang)}">{escape(code.rstrip())}</code></pre>')
        else: out += [f"<p>{escape(p.strip())}</p>" for p in part.split("\n\n") if p.strip()]
    return "\n".join(out)

def html(title, meta, secs):
    metas = "".join(f'<meta name="{k}" content="{escape(",".join(v) if isinstance(v, list) else str(v))}">\n' for k, v in meta.items())
    body = "".join(f"<h2>{escape(h)}</h2>\n{html_block(b)}\n" for h, b in secs)
    return f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{escape(title)}</title>\n{metas}</head>\n<body>\n<h1>{escape(title)}</h1>\n{body}</body></html>\n"

def pdf(path, title, secs):
    import sys; sys.path.insert(0, str(HERE.parents[2]))
    from gaia_mas.core.readers import write_text_pdf
    pages = [(title + "\n\n" if i == 0 else "") + "\n".join(textwrap.wrap(b, 85)) for i, (_, b) in enumerate(secs)]
    write_text_pdf(path, pages)

def docx(path, title, secs):
    import docx as pydocx
    d = pydocx.Document()
    d.core_properties.title = title
    for k in ("created", "modified", "last_printed"): setattr(d.core_properties, k, __import__("datetime").datetime(2025, 1, 1))
    d.add_heading(title, 0)
    for h, b in secs: d.add_heading(h, 1); d.add_paragraph(b)
    buf = io.BytesIO(); d.save(buf)
    # re-zip with fixed timestamps so the file is byte-for-byte reproducible
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in sorted(zin.infolist(), key=lambda i: i.filename):
            info = zipfile.ZipInfo(item.filename, (2025, 1, 1, 0, 0, 0)); info.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(info, zin.read(item.filename))

def main():
    OUT.mkdir(exist_ok=True)
    names = set()
    for name, title, meta, secs in DOCS:
        p = OUT/name; names.add(name)
        if name.endswith(".md"): p.write_text(md(title, meta, secs))
        elif name.endswith(".html"): p.write_text(html(title, meta, secs))
        else:
            (pdf if name.endswith(".pdf") else docx)(p, title, secs)
            p.with_name(name + ".meta.json").write_text(json.dumps({"title": title, **meta}, indent=1) + "\n")
    for q, rel, _ in GOLDEN: assert set(rel) <= names, (q, rel)
    with open(HERE/"golden.jsonl", "w") as f:
        for i, (q, rel, ans) in enumerate(GOLDEN, 1):
            f.write(json.dumps({"id": f"q{i:02d}", "question": q, "relevant": rel, "answer": ans}) + "\n")
    print(f"{len(DOCS)} documents in {OUT}, {len(GOLDEN)} golden questions")

if __name__ == "__main__": main()
