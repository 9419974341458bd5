import Foundation
import NativeOS
import Synchronization

/// A small Prometheus metrics registry: counters, gauges and histograms with labels, rendered in
/// the text exposition format (version 0.0.4) for `GET /metrics`.
///
/// Families are declared once with their help text; samples are keyed by label values. An
/// update takes one short lock: for counters and histograms, that of its family's shard for the
/// processor the caller runs on; for gauges, the family's only one.
///
/// ```swift
/// let metrics = Metrics()
/// let issued = metrics.counter("upgate_tokens_issued_total", "Upload tokens issued.", labels: ["client"])
/// issued.increment(["demo"])
/// print(metrics.render())
/// ```
public final class Metrics: Sendable {
    fileprivate enum Kind: String { case counter, gauge, histogram }

    /// One histogram sample: a count per bucket (not cumulative), the sum and the count.
    fileprivate struct Distribution {
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0

        mutating func record(_ value: Double, buckets: [Double]) {
            if let index = buckets.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
            sum += value
            count += 1
        }

        mutating func add(_ other: Distribution) {
            for index in counts.indices { counts[index] += other.counts[index] }
            sum += other.sum
            count += other.count
        }
    }

    /// The samples one shard of a family holds, by label values.
    fileprivate struct Samples {
        var values: [[String]: Double] = [:]  // counter/gauge value; histogram: unused
        var histograms: [[String]: Distribution] = [:]
    }

    /// One lock and the samples behind it. Padded so that two shards allocated one after the
    /// other do not share a cache line: the point of a shard is that no other core writes near it.
    fileprivate final class Shard: Sendable {
        let samples = Mutex(Samples())
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// One family: what was declared, and its samples split into one shard per processor slot.
    /// Counters and histograms update the shard of the processor the caller runs on, so threads
    /// on different cores never take the same lock or write the same memory (a request's
    /// metrics were the most contended lock of a token request); reading sums the shards. A
    /// gauge keeps one shard, since `set` must replace the value everywhere.
    fileprivate final class Cell: Sendable {
        let name: String
        let kind: Kind
        let help: String
        let labelNames: [String]
        let buckets: [Double]
        let shards: [Shard]

        init(name: String, kind: Kind, help: String, labelNames: [String], buckets: [Double]) {
            self.name = name
            self.kind = kind
            self.help = help
            self.labelNames = labelNames
            self.buckets = buckets
            shards = (0..<(kind == .gauge ? 1 : Metrics.shardCount)).map { _ in Shard() }
        }

        /// The shard for an update from the calling thread.
        var local: Shard { shards[CurrentProcessor.index & (shards.count - 1)] }

        /// Every shard's samples added up.
        func merged() -> Samples {
            var merged = Samples()
            for shard in shards {
                shard.samples.withLock { samples in
                    for (labels, value) in samples.values { merged.values[labels, default: 0] += value }
                    for (labels, sample) in samples.histograms {
                        merged.histograms[labels, default: Distribution(counts: Array(repeating: 0, count: buckets.count))]
                            .add(sample)
                    }
                }
            }
            return merged
        }
    }

    /// Shards per counter or histogram family: the processors, rounded up to a power of two so a
    /// processor index picks one with a mask, at most 64.
    fileprivate static let shardCount: Int = {
        let processors = min(64, max(1, ProcessInfo.processInfo.activeProcessorCount))
        var count = 1
        while count < processors { count <<= 1 }
        return count
    }()

    /// The families in declaration order, and by name.
    private let cells = Mutex<(order: [Cell], byName: [String: Cell])>(([], [:]))

    /// Creates an empty registry.
    public init() {}

    /// Declares (or returns the existing) counter family `name`.
    public func counter(_ name: String, _ help: String, labels: [String] = []) -> Counter {
        Counter(cell: declare(name, .counter, help, labels, buckets: []))
    }

    /// Declares (or returns the existing) gauge family `name`.
    public func gauge(_ name: String, _ help: String, labels: [String] = []) -> Gauge {
        Gauge(cell: declare(name, .gauge, help, labels, buckets: []))
    }

    /// Declares (or returns the existing) histogram family `name` with upper bounds `buckets`.
    public func histogram(
        _ name: String,
        _ help: String,
        labels: [String] = [],
        buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    ) -> Histogram {
        Histogram(cell: declare(name, .histogram, help, labels, buckets: buckets.sorted()))
    }

    private func declare(_ name: String, _ kind: Kind, _ help: String, _ labels: [String], buckets: [Double]) -> Cell {
        cells.withLock { cells in
            if let existing = cells.byName[name] { return existing }
            let cell = Cell(name: name, kind: kind, help: help, labelNames: labels, buckets: buckets)
            cells.order.append(cell)
            cells.byName[name] = cell
            return cell
        }
    }

    // Both update the samples in place: copying them out and back (as `var samples = …` would)
    // leaves their dictionaries shared, so every update copied them whole.
    fileprivate static func add(_ shard: Shard, _ labels: [String], _ delta: Double, set: Bool = false) {
        shard.samples.withLock { samples in
            if set {
                samples.values[labels] = delta
            } else {
                samples.values[labels, default: 0] += delta
            }
        }
    }

    fileprivate static func observe(_ cell: Cell, _ labels: [String], _ value: Double) {
        let buckets = cell.buckets
        cell.local.samples.withLock { samples in
            samples.histograms[labels, default: Distribution(counts: Array(repeating: 0, count: buckets.count))]
                .record(value, buckets: buckets)
        }
    }

    /// Returns the current value of a counter or gauge sample (0 when never touched); for tests.
    public func value(_ name: String, _ labels: [String] = []) -> Double {
        guard let cell = cells.withLock({ $0.byName[name] }) else { return 0 }
        return cell.shards.reduce(0) { total, shard in total + shard.samples.withLock { $0.values[labels] ?? 0 } }
    }

    /// Renders every family in Prometheus text format.
    public func render() -> String {
        let order = cells.withLock { $0.order }
        var out = ""
        for cell in order {
            let name = cell.name
            let samples = cell.merged()
            out += "# HELP \(name) \(cell.help)\n# TYPE \(name) \(cell.kind.rawValue)\n"
            if cell.kind == .histogram {
                for labels in samples.histograms.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    let sample = samples.histograms[labels]!
                    var cumulative: UInt64 = 0
                    for (index, bound) in cell.buckets.enumerated() {
                        let le = Self.labelText(cell.labelNames + ["le"], labels + [Self.number(bound)])
                        cumulative += sample.counts[index]
                        out += "\(name)_bucket\(le) \(cumulative)\n"
                    }
                    out += "\(name)_bucket\(Self.labelText(cell.labelNames + ["le"], labels + ["+Inf"])) \(sample.count)\n"
                    let plain = Self.labelText(cell.labelNames, labels)
                    out += "\(name)_sum\(plain) \(Self.number(sample.sum))\n\(name)_count\(plain) \(sample.count)\n"
                }
            } else {
                if samples.values.isEmpty && cell.labelNames.isEmpty { out += "\(name) 0\n" }
                for labels in samples.values.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    out += "\(name)\(Self.labelText(cell.labelNames, labels)) \(Self.number(samples.values[labels]!))\n"
                }
            }
        }
        return out
    }

    private static func labelText(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        let pairs = zip(names, values).map { name, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
            return "\(name)=\"\(escaped)\""
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A monotonically increasing count, per label values.
public struct Counter: Sendable {
    fileprivate let cell: Metrics.Cell
    /// Adds `amount` (default 1) to the sample with `labels`.
    public func increment(_ labels: [String] = [], by amount: Double = 1) { Metrics.add(cell.local, labels, amount) }
}

/// A value that goes up and down, per label values.
public struct Gauge: Sendable {
    fileprivate let cell: Metrics.Cell
    /// Sets the sample with `labels` to `value`.
    public func set(_ value: Double, _ labels: [String] = []) { Metrics.add(cell.shards[0], labels, value, set: true) }
    /// Adds `delta` (may be negative) to the sample with `labels`.
    public func add(_ delta: Double, _ labels: [String] = []) { Metrics.add(cell.shards[0], labels, delta) }
}

/// A distribution of observed values (e.g. request latency in seconds), per label values.
public struct Histogram: Sendable {
    fileprivate let cell: Metrics.Cell
    /// Records one observation.
    public func observe(_ value: Double, _ labels: [String] = []) { Metrics.observe(cell, labels, value) }
}
