// Chart layout: nice tick steps, linear scales, line and grouped-bar geometry, a legend.
#include "lab/report_chart.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

constexpr double kLeft = 64, kRight = 16, kTop = 32, kBottom = 64;

// 1, 2 or 5 × 10^k, about range / 5.
double niceStep(double range) {
    if (!(range > 0)) return 1;
    const double raw = range / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10 * mag;
}

std::string tickLabel(double v, double step) {
    std::ostringstream s;
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
    s << std::fixed << std::setprecision(std::min(decimals, 6)) << v;
    return s.str();
}

struct Axis {
    double lo = 0, hi = 1, step = 1;
};

Axis niceAxis(double lo, double hi, bool fromZero) {
    if (fromZero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    if (!(hi > lo)) hi = lo + 1;
    Axis a;
    a.step = niceStep(hi - lo);
    a.lo = std::floor(lo / a.step) * a.step;
    a.hi = std::ceil(hi / a.step) * a.step;
    return a;
}

} // namespace

const char* chartColour(int index) {
    static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
    return kPalette[static_cast<size_t>(index) % (sizeof kPalette / sizeof *kPalette)];
}

ChartLayout layoutChart(const ReportChart& chart, double width, double height) {
    ChartLayout l;
    l.width = width;
    l.height = height;
    const double x0 = kLeft, x1 = width - kRight, y0 = height - kBottom, y1 = kTop;
    l.texts.push_back({width / 2, 20, chart.title, ChartLayout::Text::Anchor::Middle, 14});

    const bool bars = chart.kind == ReportChart::Kind::Bars;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (const auto& s : chart.series)
        for (const auto& [x, y] : s.points) {
            xlo = std::min(xlo, x), xhi = std::max(xhi, x);
            ylo = std::min(ylo, y), yhi = std::max(yhi, y);
        }
    const bool empty = !(xhi >= xlo);
    if (empty) {
        l.texts.push_back({width / 2, height / 2, "no data", ChartLayout::Text::Anchor::Middle, 12});
        return l;
    }
    const Axis ya = niceAxis(ylo, yhi, true);
    auto py = [&](double y) { return y0 - (y - ya.lo) / (ya.hi - ya.lo) * (y0 - y1); };
    for (double t = ya.lo; t <= ya.hi + ya.step / 2; t += ya.step) {
        l.lines.push_back({x0, py(t), x1, py(t), true});
        l.texts.push_back({x0 - 6, py(t) + 4, tickLabel(t, ya.step), ChartLayout::Text::Anchor::End, 10});
    }

    if (bars) {
        const size_t n = std::max<size_t>(1, chart.categories.size());
        const double band = (x1 - x0) / static_cast<double>(n);
        const double barW = band * 0.8 / static_cast<double>(std::max<size_t>(1, chart.series.size()));
        for (size_t si = 0; si < chart.series.size(); ++si)
            for (const auto& [x, y] : chart.series[si].points) {
                const double left = x0 + band * x + band * 0.1 + barW * static_cast<double>(si);
                const double top = py(std::max(y, 0.0)), bottom = py(std::min(y, 0.0));
                l.rects.push_back({left, top, barW, bottom - top, static_cast<int>(si)});
            }
        // Category labels, thinned so that they do not overlap.
        const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil(70.0 / band)));
        for (size_t c = 0; c < chart.categories.size(); c += every)
            l.texts.push_back({x0 + band * (static_cast<double>(c) + 0.5), y0 + 16, chart.categories[c],
                               ChartLayout::Text::Anchor::Middle, 10});
    } else {
        const Axis xa = niceAxis(xlo, xhi, false);
        auto px = [&](double x) { return x0 + (x - xa.lo) / (xa.hi - xa.lo) * (x1 - x0); };
        for (double t = xa.lo; t <= xa.hi + xa.step / 2; t += xa.step) {
            l.lines.push_back({px(t), y0, px(t), y0 + 4, false});
            l.texts.push_back({px(t), y0 + 16, tickLabel(t, xa.step), ChartLayout::Text::Anchor::Middle, 10});
        }
        for (size_t si = 0; si < chart.series.size(); ++si) {
            ChartLayout::Polyline p{{}, static_cast<int>(si)};
            for (const auto& [x, y] : chart.series[si].points) p.points.emplace_back(px(x), py(y));
            l.polylines.push_back(std::move(p));
        }
    }
    l.lines.push_back({x0, y0, x1, y0, false});
    l.lines.push_back({x0, y0, x0, y1, false});
    l.texts.push_back({(x0 + x1) / 2, y0 + 34, chart.xLabel, ChartLayout::Text::Anchor::Middle, 11});
    l.texts.push_back({14, (y0 + y1) / 2, chart.yLabel, ChartLayout::Text::Anchor::Middle, 11, true});
    // Legend: a swatch and the series name, left to right under the axis label.
    double lx = x0;
    for (size_t si = 0; si < chart.series.size(); ++si) {
        l.rects.push_back({lx, height - 16, 10, 10, static_cast<int>(si)});
        l.texts.push_back({lx + 14, height - 7, chart.series[si].name, ChartLayout::Text::Anchor::Start, 10});
        lx += 24 + 6.5 * static_cast<double>(chart.series[si].name.size());
    }
    return l;
}

} // namespace mb::lab
