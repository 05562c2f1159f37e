package import NIOCore

extension ByteBuffer {
    /// The readable bytes in a storage of their own, when this buffer is a slice of a much larger one.
    ///
    /// A `bytea` column PostgresNIO decodes is a slice of the connection's read buffer, and its decoder, finding that
    /// buffer shared after each large row, copies what is left of it into a new buffer of the same size: so every event
    /// body of a claimed batch (about 15 kB) held on to a read buffer of 32 or 64 kB, for as long as the batch lived.
    /// Copied out as each row is decoded, a body costs its own size, and the read buffers go back to the allocator at
    /// once, to be reused instead of taken afresh from the kernel.
    package func inOwnStorage() -> ByteBuffer {
        guard storageCapacity > readableBytes * 2 else { return self }
        var copy = ByteBufferAllocator().buffer(capacity: readableBytes)
        copy.writeImmutableBuffer(self)
        return copy
    }
}
