import Foundation
import Synchronization

/// A small Prometheus metrics registry: counters, gauges and histograms with labels, rendered in
/// the text exposition format (version 0.0.4) for `GET /metrics`.
///
/// Families are declared once with their help text; samples are keyed by label values. An
/// update takes its family's own short lock.
///
/// ```swift
/// let metrics = Metrics()
/// let issued = metrics.counter("upgate_tokens_issued_total", "Upload tokens issued.", labels: ["client"])
/// issued.increment(["demo"])
/// print(metrics.render())
/// ```
public final class Metrics: Sendable {
    fileprivate enum Kind: String { case counter, gauge, histogram }

    fileprivate struct Family {
        var kind: Kind
        var help: String
        var labelNames: [String]
        var buckets: [Double]
        var values: [[String]: Double] = [:]  // counter/gauge value; histogram: unused
        var histograms: [[String]: (counts: [UInt64], sum: Double, count: UInt64)] = [:]
    }

    /// One family and its lock: an update locks its own family only, so two requests updating
    /// different families (or a render) never wait for each other, and no family name is hashed.
    fileprivate final class Cell: Sendable {
        let name: String
        let family: Mutex<Family>
        init(name: String, family: Family) {
            self.name = name
            self.family = Mutex(family)
        }
    }

    /// The families in declaration order, and by name.
    private let cells = Mutex<(order: [Cell], byName: [String: Cell])>(([], [:]))

    /// Creates an empty registry.
    public init() {}

    /// Declares (or returns the existing) counter family `name`.
    public func counter(_ name: String, _ help: String, labels: [String] = []) -> Counter {
        Counter(cell: declare(name, Family(kind: .counter, help: help, labelNames: labels, buckets: [])))
    }

    /// Declares (or returns the existing) gauge family `name`.
    public func gauge(_ name: String, _ help: String, labels: [String] = []) -> Gauge {
        Gauge(cell: declare(name, Family(kind: .gauge, help: help, labelNames: labels, buckets: [])))
    }

    /// Declares (or returns the existing) histogram family `name` with upper bounds `buckets`.
    public func histogram(
        _ name: String,
        _ help: String,
        labels: [String] = [],
        buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    ) -> Histogram {
        Histogram(cell: declare(name, Family(kind: .histogram, help: help, labelNames: labels, buckets: buckets.sorted())))
    }

    private func declare(_ name: String, _ family: Family) -> Cell {
        cells.withLock { cells in
            if let existing = cells.byName[name] { return existing }
            let cell = Cell(name: name, family: family)
            cells.order.append(cell)
            cells.byName[name] = cell
            return cell
        }
    }

    // Both update the family in place: copying it out and back (as `var family = …` would)
    // leaves its dictionaries shared, so every update copied them whole.
    fileprivate static func add(_ cell: Cell, _ labels: [String], _ delta: Double, set: Bool = false) {
        cell.family.withLock { family in
            if set {
                family.values[labels] = delta
            } else {
                family.values[labels, default: 0] += delta
            }
        }
    }

    fileprivate static func observe(_ cell: Cell, _ labels: [String], _ value: Double) {
        cell.family.withLock { family in
            let buckets = family.buckets
            record(value, buckets: buckets, in: &family.histograms[labels, default: (Array(repeating: 0, count: buckets.count), 0, 0)])
        }
    }

    private static func record(
        _ value: Double, buckets: [Double], in sample: inout (counts: [UInt64], sum: Double, count: UInt64)
    ) {
        for (index, bound) in buckets.enumerated() where value <= bound { sample.counts[index] += 1 }
        sample.sum += value
        sample.count += 1
    }

    /// Returns the current value of a counter or gauge sample (0 when never touched); for tests.
    public func value(_ name: String, _ labels: [String] = []) -> Double {
        guard let cell = cells.withLock({ $0.byName[name] }) else { return 0 }
        return cell.family.withLock { $0.values[labels] ?? 0 }
    }

    /// Renders every family in Prometheus text format.
    public func render() -> String {
        let order = cells.withLock { $0.order }
        var out = ""
        for cell in order {
            let name = cell.name
            let family = cell.family.withLock { $0 }
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.kind.rawValue)\n"
            if family.kind == .histogram {
                for labels in family.histograms.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    let sample = family.histograms[labels]!
                    for (index, bound) in family.buckets.enumerated() {
                        let le = Self.labelText(family.labelNames + ["le"], labels + [Self.number(bound)])
                        out += "\(name)_bucket\(le) \(sample.counts[index])\n"
                    }
                    out += "\(name)_bucket\(Self.labelText(family.labelNames + ["le"], labels + ["+Inf"])) \(sample.count)\n"
                    let plain = Self.labelText(family.labelNames, labels)
                    out += "\(name)_sum\(plain) \(Self.number(sample.sum))\n\(name)_count\(plain) \(sample.count)\n"
                }
            } else {
                if family.values.isEmpty && family.labelNames.isEmpty { out += "\(name) 0\n" }
                for labels in family.values.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    out += "\(name)\(Self.labelText(family.labelNames, labels)) \(Self.number(family.values[labels]!))\n"
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
    public func increment(_ labels: [String] = [], by amount: Double = 1) { Metrics.add(cell, labels, amount) }
}

/// A value that goes up and down, per label values.
public struct Gauge: Sendable {
    fileprivate let cell: Metrics.Cell
    /// Sets the sample with `labels` to `value`.
    public func set(_ value: Double, _ labels: [String] = []) { Metrics.add(cell, labels, value, set: true) }
    /// Adds `delta` (may be negative) to the sample with `labels`.
    public func add(_ delta: Double, _ labels: [String] = []) { Metrics.add(cell, labels, delta) }
}

/// A distribution of observed values (e.g. request latency in seconds), per label values.
public struct Histogram: Sendable {
    fileprivate let cell: Metrics.Cell
    /// Records one observation.
    public func observe(_ value: Double, _ labels: [String] = []) { Metrics.observe(cell, labels, value) }
}
