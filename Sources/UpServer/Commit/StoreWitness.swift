import Synchronization

/// Set by the commit's write closure once the index holds our object: from then on its blobs
/// belong to the object and must not be removed, whatever fails afterwards.
final class StoreWitness: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether the index holds the object (its blobs are no longer ours to remove).
    var stored: Bool { flag.load(ordering: .acquiring) }

    /// Called right after the index accepted the object.
    func markStored() { flag.store(true, ordering: .releasing) }
}
