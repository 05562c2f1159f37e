import Foundation

/// Draws a ``ChartTable`` as an inline SVG bar chart: bars grouped by x label, one colour per series, every bar a
/// `rect` carrying `data-value` (zero-height bars included, so each point has a mark), with a `title` for
/// assistive technology and hover. Colours come from CSS classes (`series-N`), so the strict CSP needs no inline style.
enum ChartSVG {
    /// The SVG markup for `table`, titled `title`.
    static func render(_ table: ChartTable, title: String) -> String {
        let width = 640.0
        let height = 240.0
        let left = 48.0
        let right = 12.0
        let top = 24.0
        let bottom = 40.0
        var labels: [String] = []
        var series: [String] = []
        for point in table.points {
            if !labels.contains(point.label) { labels.append(point.label) }
            if !series.contains(point.series) { series.append(point.series) }
        }
        let maximum = max(table.points.map(\.value).max() ?? 0, 0)
        let scale = maximum > 0 ? niceCeiling(maximum) : 1
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let groupWidth = plotWidth / Double(max(labels.count, 1))
        let barWidth = max(groupWidth * 0.8 / Double(max(series.count, 1)), 1)
        var svg = """
            <svg viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(ConsoleFormat.html(title))" xmlns="http://www.w3.org/2000/svg">
            <title>\(ConsoleFormat.html(title))</title>
            <line class="axis" x1="\(left)" y1="\(top + plotHeight)" x2="\(width - right)" y2="\(top + plotHeight)"/>
            <line class="axis" x1="\(left)" y1="\(top)" x2="\(left)" y2="\(top + plotHeight)"/>
            <text x="\(left - 4)" y="\(top + 4)" text-anchor="end">\(ConsoleFormat.html(number(scale)))</text>
            <text x="\(left - 4)" y="\(top + plotHeight)" text-anchor="end">0</text>

            """
        for point in table.points {
            guard let x = labels.firstIndex(of: point.label), let s = series.firstIndex(of: point.series) else { continue }
            let value = max(point.value, 0)
            let barHeight = plotHeight * value / scale
            let originX = left + Double(x) * groupWidth + groupWidth * 0.1 + Double(s) * barWidth
            svg += """
                <rect class="series-\(s % 6)" x="\(format(originX))" y="\(format(top + plotHeight - barHeight))" width="\(format(barWidth))" \
                height="\(format(barHeight))" data-value="\(ConsoleFormat.html(number(point.value)))" \
                data-label="\(ConsoleFormat.html(point.label))" data-series="\(ConsoleFormat.html(point.series))">\
                <title>\(ConsoleFormat.html("\(point.label) \(point.series): \(number(point.value))\(table.unit)"))</title></rect>

                """
        }
        // Month labels: at most 12, evenly spread.
        let every = max(1, Int((Double(labels.count) / 12).rounded(.up)))
        for (index, label) in labels.enumerated() where index % every == 0 {
            let x = left + Double(index) * groupWidth + groupWidth / 2
            svg += "<text x=\"\(format(x))\" y=\"\(format(top + plotHeight + 16))\" text-anchor=\"middle\">\(ConsoleFormat.html(label))</text>\n"
        }
        // Legend.
        var legendX = left
        for (index, name) in series.enumerated() {
            svg += "<rect class=\"series-\(index % 6)\" x=\"\(format(legendX))\" y=\"6\" width=\"10\" height=\"10\"/>"
            svg += "<text x=\"\(format(legendX + 14))\" y=\"15\">\(ConsoleFormat.html(name))</text>\n"
            legendX += 24 + Double(name.count) * 6.5
        }
        return svg + "</svg>"
    }

    /// The value as the table writes it: whole numbers without decimals, others with up to two.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.2f", value)
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above `value`.
    private static func niceCeiling(_ value: Double) -> Double {
        let magnitude = pow(10, floor(log10(value)))
        for step in [1.0, 2.0, 2.5, 5.0, 10.0] where step * magnitude >= value { return step * magnitude }
        return 10 * magnitude
    }
}
