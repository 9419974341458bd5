import Basics
import Foundation
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

    /// Counters and histograms keep one shard per processor: threads on every core updating at
    /// once must still add up exactly, bucket by bucket, in `value` and in the rendered text.
    @Test func updatesFromEveryCoreAddUpAcrossShards() {
        let metrics = Metrics()
        let hits = metrics.counter("hits_total", "Hits.", labels: ["route"])
        let latency = metrics.histogram("latency_seconds", "Latency.", buckets: [0.1, 1])
        let threads = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
        let rounds = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                hits.increment(["/a"])
                latency.observe(round % 2 == 0 ? 0.05 : (thread % 2 == 0 ? 0.5 : 5))
            }
        }
        let total = threads * rounds
        let slow = (threads + 1) / 2 * rounds / 2  // even threads' odd rounds: 0.5 s
        #expect(metrics.value("hits_total", ["/a"]) == Double(total))
        let text = metrics.render()
        #expect(text.contains("hits_total{route=\"/a\"} \(total)\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"0.1\"} \(total / 2)\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"1\"} \(total / 2 + slow)\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"+Inf\"} \(total)\n"))
        #expect(text.contains("latency_seconds_count \(total)\n"))
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
