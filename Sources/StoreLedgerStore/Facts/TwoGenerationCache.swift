/// The bounded, approximately least-recently-used store behind the process's caches (``DecodedFactCache`` and
/// ``FoldStateCache``): two generations of at most `capacity / 2` values each; a hit in the older one moves the value
/// to the newer, and when the newer is full the older is dropped. A value type: its owner keeps it under a lock.
struct TwoGenerationCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The most values held at once (0 holds none).
    private(set) var capacity: Int
    private var newer: [Key: Value] = [:]
    private var older: [Key: Value] = [:]

    /// Creates an empty cache holding at most `capacity` values.
    init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    /// How many values it holds.
    var count: Int { newer.count + older.count }

    /// The value under `key`, if held; a hit in the older generation moves it to the newer.
    mutating func value(for key: Key) -> Value? {
        if let value = newer[key] { return value }
        guard let value = older.removeValue(forKey: key) else { return nil }
        insert(value, for: key)
        return value
    }

    /// Holds `value` under `key`, replacing what was held.
    mutating func insert(_ value: Value, for key: Key) {
        guard capacity > 0 else { return }
        older.removeValue(forKey: key)
        if newer[key] == nil, newer.count >= (capacity + 1) / 2 {
            // The older generation's storage becomes the newer's, emptied: it already has the room, so the newer
            // generation does not grow (and rehash) its way up to a full generation again.
            swap(&older, &newer)
            newer.removeAll(keepingCapacity: true)
        }
        newer[key] = value
    }

    /// Forgets the value under `key`.
    mutating func remove(_ key: Key) {
        newer.removeValue(forKey: key)
        older.removeValue(forKey: key)
    }

    /// Changes the capacity; when it holds more than the new capacity, it is emptied.
    mutating func resize(to capacity: Int) {
        self.capacity = max(capacity, 0)
        if count > self.capacity {
            newer = [:]
            older = [:]
        }
    }
}
