import Foundation
import StoreLedgerTestSupport

/// `docs/openapi.json`, with a validator for the JSON Schema subset it uses (type, properties, required,
/// additionalProperties, items, enum, const, minimum, minLength, maxItems, pattern, format date-time/uuid, $ref), so
/// tests can check real responses and requests against the document.
struct OpenAPIDocument {
    let root: [String: Any]

    /// Loads the repository's document.
    static func load() throws -> OpenAPIDocument {
        let data = try Data(contentsOf: ThrowawayCluster.repositoryRoot.appendingPathComponent("docs/openapi.json"))
        return OpenAPIDocument(root: try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:])
    }

    /// Every documented (path template, method).
    var operations: Set<String> {
        var result: Set<String> = []
        for (path, item) in root["paths"] as? [String: Any] ?? [:] {
            for method in (item as? [String: Any] ?? [:]).keys { result.insert("\(method.uppercased()) \(path)") }
        }
        return result
    }

    /// The schema of the documented response, or nil when `status` is not documented for the operation.
    func responseSchema(path: String, method: String, status: Int) -> [String: Any]? {
        let operation = ((root["paths"] as? [String: Any])?[path] as? [String: Any])?[method.lowercased()] as? [String: Any]
        let response = (operation?["responses"] as? [String: Any])?[String(status)] as? [String: Any]
        return ((response?["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
    }

    /// The schema of the operation's JSON request body, nil when it takes none.
    func requestSchema(path: String, method: String) -> [String: Any]? {
        let operation = ((root["paths"] as? [String: Any])?[path] as? [String: Any])?[method.lowercased()] as? [String: Any]
        let content = (operation?["requestBody"] as? [String: Any])?["content"] as? [String: Any]
        return (content?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
    }

    /// The schemas of the operation's path parameters, by name.
    func pathParameters(path: String, method: String) -> [String: [String: Any]] {
        let operation = ((root["paths"] as? [String: Any])?[path] as? [String: Any])?[method.lowercased()] as? [String: Any]
        var result: [String: [String: Any]] = [:]
        for case let parameter as [String: Any] in operation?["parameters"] as? [Any] ?? [] where parameter["in"] as? String == "path" {
            if let name = parameter["name"] as? String { result[name] = parameter["schema"] as? [String: Any] ?? [:] }
        }
        return result
    }

    /// `schema` with its `$ref` resolved.
    func resolved(_ schema: [String: Any]) -> [String: Any] {
        guard let reference = schema["$ref"] as? String else { return schema }
        let name = String(reference.split(separator: "/").last ?? "")
        return ((root["components"] as? [String: Any])?["schemas"] as? [String: Any])?[name] as? [String: Any] ?? [:]
    }

    /// Whether `schema` admits strings (its `type` names `string`).
    static func admitsStrings(_ schema: [String: Any]) -> Bool {
        ((schema["type"] as? [String]) ?? (schema["type"] as? String).map { [$0] } ?? []).contains("string")
    }

    /// The violations of `schema` by `value`, as readable paths.
    func violations(of value: Any, against schema: [String: Any], at path: String = "$") -> [String] {
        if let reference = schema["$ref"] as? String {
            let name = String(reference.split(separator: "/").last ?? "")
            guard let resolved = ((root["components"] as? [String: Any])?["schemas"] as? [String: Any])?[name] as? [String: Any] else {
                return ["\(path): unresolvable \(reference)"]
            }
            return violations(of: value, against: resolved, at: path)
        }
        var problems: [String] = []
        if let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map({ [$0] }),
            !types.contains(where: { Self.matches(value, type: $0) })
        {
            return ["\(path): \(Self.describe(value)) is not \(types.joined(separator: "|"))"]
        }
        if let options = schema["enum"] as? [Any], !options.contains(where: { Self.equal($0, value) }) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        if let constant = schema["const"], !Self.equal(constant, value) { problems.append("\(path): \(value) is not \(constant)") }
        if let minimum = schema["minimum"] as? Double, let number = value as? NSNumber, number.doubleValue < minimum {
            problems.append("\(path): \(number) < \(minimum)")
        }
        if let text = value as? String {
            if schema["format"] as? String == "date-time", Self.rfc3339Date(text) == nil {
                problems.append("\(path): '\(text)' is not an RFC 3339 date-time")
            }
            if schema["format"] as? String == "uuid", UUID(uuidString: text) == nil { problems.append("\(path): '\(text)' is not a UUID") }
            if let minimum = schema["minLength"] as? Int, text.count < minimum {
                problems.append("\(path): '\(text)' is shorter than \(minimum)")
            }
            if let pattern = schema["pattern"] as? String, text.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): '\(text)' does not match \(pattern)")
            }
        }
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for required in schema["required"] as? [String] ?? [] where object[required] == nil {
                problems.append("\(path): missing required '\(required)'")
            }
            for (key, member) in object {
                if let propertySchema = properties[key] as? [String: Any] {
                    problems += violations(of: member, against: propertySchema, at: "\(path).\(key)")
                } else if schema["additionalProperties"] as? Bool == false || !properties.isEmpty {
                    problems.append("\(path): undocumented property '\(key)'")
                }
            }
        }
        if let array = value as? [Any] {
            if let maximum = schema["maxItems"] as? Int, array.count > maximum { problems.append("\(path): more than \(maximum) items") }
            if let items = schema["items"] as? [String: Any] {
                for (index, element) in array.enumerated() { problems += violations(of: element, against: items, at: "\(path)[\(index)]") }
            }
        }
        return problems
    }

    private static func matches(_ value: Any, type: String) -> Bool {
        switch type {
        case "null": return value is NSNull
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
        case "integer": return (value as? NSNumber).map { !matches(value, type: "boolean") && $0.doubleValue == $0.doubleValue.rounded() } ?? false
        case "number": return value is NSNumber && !matches(value, type: "boolean")
        default: return false
        }
    }

    /// `text` as an RFC 3339 date-time, with or without fractional seconds (RFC 3339 allows both; seed 001's route
    /// writes milliseconds as JavaScript did); nil when it is neither.
    static func rfc3339Date(_ text: String) -> Date? {
        let whole = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return whole.date(from: text) ?? fractional.date(from: text)
    }

    private static func equal(_ lhs: Any, _ rhs: Any) -> Bool {
        if lhs is NSNull || rhs is NSNull { return lhs is NSNull && rhs is NSNull }
        return (lhs as? NSObject)?.isEqual(rhs) ?? false
    }

    private static func describe(_ value: Any) -> String {
        value is NSNull ? "null" : "\(type(of: value)) \(value)"
    }
}
