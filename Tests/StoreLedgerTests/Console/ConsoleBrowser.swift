import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A minimal browser for the console's handler tests: keeps cookies as a browser would (Set-Cookie, Max-Age=0
/// removes), sends forms URL-encoded, and reads values out of the HTML.
final class ConsoleBrowser: @unchecked Sendable {
    let client: any TestClientProtocol
    private(set) var cookies: [String: String] = [:]
    /// Every Set-Cookie line received, newest last.
    private(set) var setCookies: [String] = []

    init(_ client: any TestClientProtocol) {
        self.client = client
    }

    /// GET `uri`, without following redirects.
    func get(_ uri: String) async throws -> TestResponse {
        try await send(uri, method: .get, body: nil)
    }

    /// POST `fields` URL-encoded to `uri`.
    func post(_ uri: String, _ fields: [(String, String)]) async throws -> TestResponse {
        let body = fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        return try await send(uri, method: .post, body: body, contentType: "application/x-www-form-urlencoded")
    }

    func send(_ uri: String, method: HTTPRequest.Method, body: String?, contentType: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if !cookies.isEmpty { headers[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        if let contentType { headers[.contentType] = contentType }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        for line in response.headers[values: .setCookie] {
            setCookies.append(line)
            let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0])
            let value = pair.count > 1 ? String(pair[1]) : ""
            if line.contains("Max-Age=0") || value.isEmpty { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    /// Signs in with a name and password through the real form; returns the POST's response.
    @discardableResult
    func signIn(_ name: String, _ password: String) async throws -> TestResponse {
        let page = try await get("/console/login")
        let csrf = try #require(Self.csrf(in: page))
        return try await post("/console/login", [("csrf_token", csrf), ("username", name), ("password", password)])
    }

    /// Signs in with an API key through the real form; returns the POST's response.
    @discardableResult
    func signIn(apiKey: String) async throws -> TestResponse {
        let page = try await get("/console/login")
        let csrf = try #require(Self.csrf(in: page))
        return try await post("/console/login", [("csrf_token", csrf), ("api_key", apiKey)])
    }

    /// The value of the first `csrf_token` hidden field in the page.
    static func csrf(in response: TestResponse) -> String? {
        let html = String(buffer: response.body)
        guard let range = html.range(of: #"name="csrf_token" value="([^"]*)""#, options: .regularExpression) else { return nil }
        let match = html[range]
        return match.split(separator: "\"").dropFirst(3).first.map(String.init)
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }
}

extension TestResponse {
    /// The body as text.
    var html: String { String(buffer: body) }
    /// The Location header.
    var location: String? { headers[.location] }
}
