package import Foundation
package import Logging

/// Writes one JSON object per log line to standard output (`LOG_FORMAT=json`): `ts`, `level`, `label`,
/// `message`, `source` and the metadata as string fields, for log pipelines that parse JSON.
package struct JSONLogHandler: LogHandler {
    /// The logger's label.
    package let label: String
    /// The minimum level written.
    package var logLevel: Logger.Level = .info
    /// Metadata added to every line.
    package var metadata: Logger.Metadata = [:]
    /// Where lines go (standard output by default).
    let write: @Sendable (Data) -> Void

    /// Creates a handler writing to `write` (standard output by default).
    package init(label: String, write: @escaping @Sendable (Data) -> Void = { FileHandle.standardOutput.write($0) }) {
        self.label = label
        self.write = write
    }

    /// Reads or writes one metadata value.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    package func log(event: LogEvent) {
        var object: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = "\(value)" }
        object["ts"] = ISO8601DateFormatter().string(from: Date())
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = "\(event.message)"
        object["source"] = event.source
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        write(line)
    }
}
