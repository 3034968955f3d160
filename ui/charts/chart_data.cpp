#include "ui/charts/chart_data.h"

namespace kcx::ui {

namespace {

std::string label(const Clause& c, const std::string& which) { return c.id + ' ' + which; }

void add(std::vector<ValueLine>& out, const Clause& c, const char* which, const std::optional<Threshold>& t) {
    if (t)
        out.push_back({which, t->value, true, label(c, which)});
}

}  // namespace

std::vector<ValueLine> valueLines(const Clause& c) {
    std::vector<ValueLine> out;
    if (c.family == Family::Numerical && c.aggregate) {
        using K = Aggregate::Kind;
        switch (c.aggregate->kind) {
        case K::Max:
        case K::Min:
        case K::Mean:
        case K::Quantile:
            add(out, c, "min", c.min);
            add(out, c, "max", c.max);
            break;
        case K::FractionAbove:
            out.push_back({"aggregate", c.aggregate->a, false, label(c, "fraction_above")});
            break;
        case K::FractionOutside:
            out.push_back({"aggregate", c.aggregate->a, false, label(c, "outside below")});
            out.push_back({"aggregate", c.aggregate->b, false, label(c, "outside above")});
            break;
        case K::Sum:
        case K::Count:
            break;
        }
    } else if (c.family == Family::Statistical) {
        if (c.test == Clause::Test::Exceedance) {
            add(out, c, "level", c.level);
        } else {
            add(out, c, "min", c.min);
            add(out, c, "max", c.max);
        }
    }
    return out;
}

}  // namespace kcx::ui
