import Basics
import Testing

@Suite("Metrics")
struct MetricsTests {
    @Test func rendersCountersWithLabelsInPrometheusFormat() {
        let metrics = Metrics()
        let refused = metrics.counter("tokens_refused_total", "Refused tokens.", labels: ["reason"])
        refused.increment(["rate_limited"])
        refused.increment(["rate_limited"])
        refused.increment(["bad \"key\""])
        let text = metrics.render()
        #expect(text.contains("# HELP tokens_refused_total Refused tokens.\n# TYPE tokens_refused_total counter\n"))
        #expect(text.contains("tokens_refused_total{reason=\"rate_limited\"} 2\n"))
        #expect(text.contains("tokens_refused_total{reason=\"bad \\\"key\\\"\"} 1\n"))
        #expect(metrics.value("tokens_refused_total", ["rate_limited"]) == 2)
    }

    @Test func unlabelledCounterIsRenderedAsZeroBeforeFirstUse() {
        let metrics = Metrics()
        _ = metrics.counter("store_errors_total", "Store errors.")
        #expect(metrics.render().contains("store_errors_total 0\n"))
    }

    @Test func histogramBucketsAreCumulative() {
        let metrics = Metrics()
        let latency = metrics.histogram("latency_seconds", "Latency.", labels: ["route"], buckets: [0.1, 1])
        latency.observe(0.05, ["/a"])
        latency.observe(0.5, ["/a"])
        latency.observe(5, ["/a"])
        let text = metrics.render()
        #expect(text.contains("latency_seconds_bucket{route=\"/a\",le=\"0.1\"} 1\n"))
        #expect(text.contains("latency_seconds_bucket{route=\"/a\",le=\"1\"} 2\n"))
        #expect(text.contains("latency_seconds_bucket{route=\"/a\",le=\"+Inf\"} 3\n"))
        #expect(text.contains("latency_seconds_sum{route=\"/a\"} 5.55\n"))
        #expect(text.contains("latency_seconds_count{route=\"/a\"} 3\n"))
    }

    @Test func declaringAFamilyAgainSharesItsSamplesAndConcurrentUpdatesAllCount() async {
        let metrics = Metrics()
        let first = metrics.counter("t_total", "T.", labels: ["k"])
        let again = metrics.counter("t_total", "T.", labels: ["k"])
        let other = metrics.histogram("t_seconds", "S.", buckets: [1])
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for _ in 0..<1000 {
                        (task % 2 == 0 ? first : again).increment(["a"])
                        other.observe(0.5)
                    }
                }
            }
        }
        #expect(metrics.value("t_total", ["a"]) == 8000)
        #expect(metrics.render().contains("t_seconds_count 8000\n"))
        #expect(metrics.render().split(separator: "\n").filter { $0 == "# TYPE t_total counter" }.count == 1)
    }

    @Test func gaugeGoesUpAndDown() {
        let metrics = Metrics()
        let depth = metrics.gauge("depth", "Depth.")
        depth.add(3)
        depth.add(-1)
        #expect(metrics.value("depth") == 2)
        depth.set(7)
        #expect(metrics.value("depth") == 7)
    }
}
