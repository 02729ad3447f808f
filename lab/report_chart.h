// Chart geometry shared by the report renderers: axes, ticks, lines and bars in pixel space.
//
// layoutChart turns a ReportChart into drawing primitives once; the HTML renderer writes
// them as SVG and the PDF renderer paints them with QPainter, so both draw the same chart.
#pragma once

#include "lab/report.h"

#include <string>
#include <utility>
#include <vector>

namespace mb::lab {

struct ChartLayout {
    double width = 0, height = 0;
    struct Line {
        double x1, y1, x2, y2;
        bool grid; // light grid line, else axis
    };
    struct Polyline {
        std::vector<std::pair<double, double>> points;
        int colour; // index into chartColour
    };
    struct Rect {
        double x, y, w, h;
        int colour;
    };
    struct Text {
        double x, y;
        std::string text;
        enum class Anchor { Start, Middle, End } anchor;
        double size; // px
        bool vertical = false;
    };
    std::vector<Line> lines;
    std::vector<Polyline> polylines;
    std::vector<Rect> rects;
    std::vector<Text> texts; // title, tick labels, axis labels, legend
};

// "#RRGGBB" of series `index` (cycles through a palette that prints in grey distinctly).
const char* chartColour(int index);

ChartLayout layoutChart(const ReportChart& chart, double width = 640, double height = 320);

} // namespace mb::lab
