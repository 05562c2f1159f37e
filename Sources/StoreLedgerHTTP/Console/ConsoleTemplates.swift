import Foundation
import Mustache

/// The console's Mustache templates and stylesheet, shipped as package resources (`Console/Resources`) and parsed once.
/// `{{value}}` escapes HTML (`<`, `>`, `&`, `"`, `'`) scalar by scalar (``ConsoleFormat/html(_:)``, not the library's
/// default, which goes by `Character`); only server-built SVG is inserted unescaped (`{{{svg}}}`).
struct ConsoleTemplates: Sendable {
    /// The parsed templates, by file name without `.mustache`.
    let library: MustacheLibrary
    /// `console.css`.
    let stylesheet: String

    /// Loads and parses every template.
    init() throws(ConsoleError) {
        guard let resources = Bundle.module.url(forResource: "Resources", withExtension: nil) else {
            throw ConsoleError(.templates, "the console's resources are missing from this build")
        }
        let folder = resources.appendingPathComponent("templates")
        var library = MustacheLibrary()
        MustacheContentTypes.register(ScalarHTML(), named: ScalarHTML.name)
        do {
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".mustache") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                // Every template (a partial too) escapes with ScalarHTML.
                // On a line of its own, which the parser drops whole (standalone): the template renders as written.
                try library.register("{{% CONTENT_TYPE: \(ScalarHTML.name)}}\n" + text, named: String(file.dropLast(".mustache".count)))
            }
            stylesheet = try String(contentsOf: resources.appendingPathComponent("console.css"), encoding: .utf8)
        } catch {
            throw ConsoleError(.templates, "the console's templates cannot be read: \(error)")
        }
        self.library = library
    }

    /// HTML escaping scalar by scalar, as the templates' content type.
    private struct ScalarHTML: MustacheContentType {
        static let name = "STORELEDGER_HTML"
        func escapeText(_ text: String) -> String { ConsoleFormat.html(text) }
    }

    /// Renders template `name` with `context` (dictionaries, arrays, strings, numbers and booleans).
    func render(_ name: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: name) ?? ""
    }
}
