// Reference arithmetic written out in the tests, independent of core/'s kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace kcx::test {

// softmax(z), with the maximum subtracted first.
inline std::vector<double> softmax(const std::vector<double>& z) {
    const double m = *std::max_element(z.begin(), z.end());
    double s = 0;
    std::vector<double> p(z.size());
    for (size_t i = 0; i < z.size(); ++i)
        s += p[i] = std::exp(z[i] - m);
    for (double& x : p)
        x /= s;
    return p;
}

}  // namespace kcx::test
