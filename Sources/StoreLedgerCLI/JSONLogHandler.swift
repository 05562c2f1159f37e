import Foundation
import Logging

/// Writes one JSON object per log line to standard output (`LOG_FORMAT=json`): `ts`, `level`, `label`,
/// `message`, `source` and the metadata as string fields, for log pipelines that parse JSON.
struct JSONLogHandler: LogHandler {
    /// The logger's label.
    let label: String
    /// The minimum level written.
    var logLevel: Logger.Level = .info
    /// Metadata added to every line.
    var metadata: Logger.Metadata = [:]

    /// Reads or writes one metadata value.
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    func log(event: LogEvent) {
        var object: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = "\(value)" }
        object["ts"] = ISO8601DateFormatter().string(from: Date())
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = "\(event.message)"
        object["source"] = event.source
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        FileHandle.standardOutput.write(line)
    }
}
