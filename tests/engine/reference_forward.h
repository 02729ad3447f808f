// A float64 reference forward pass for every architecture, written from the arch/ README's math and
// checked against llama.cpp's goldens; tests compare the engine with it where llama.cpp has no golden.
#pragma once

#include "engine/llama_model.h"
#include "kernels/cpu/quant.h"

#include <cmath>
#include <vector>

namespace mb::test {

using Vec = std::vector<double>;

namespace ref {

inline Vec rows(const kernels::WeightMatrix& w) { // (rows, cols) as doubles
    Vec out(static_cast<size_t>(w.rows * w.cols));
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        kernels::dequantizeRow(w.type, w.row(r), row.data(), w.cols);
        for (int64_t c = 0; c < w.cols; ++c) out[static_cast<size_t>(r * w.cols + c)] = row[static_cast<size_t>(c)];
    }
    return out;
}

struct Dense { // a matrix dequantised once
    Vec m;
    int64_t rows, cols;
    explicit Dense(const kernels::WeightMatrix& w) : m(ref::rows(w)), rows(w.rows), cols(w.cols) {}
};

inline Vec matvec(const Dense& w, const Vec& x) {
    const Vec& m = w.m;
    Vec y(static_cast<size_t>(w.rows));
    for (int64_t r = 0; r < w.rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < w.cols; ++c) s += m[static_cast<size_t>(r * w.cols + c)] * x[static_cast<size_t>(c)];
        y[static_cast<size_t>(r)] = s;
    }
    return y;
}

inline void rms(double* x, const std::vector<float>& w, size_t n, double eps) {
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
    const double s = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (size_t i = 0; i < n; ++i) x[i] = x[i] * s * w[i];
}

inline void rope(double* v, const engine::ModelConfig& c, int64_t pos) {
    const int64_t half = c.ropeDim / 2;
    for (int64_t i = 0; i < half; ++i) {
        double theta = static_cast<double>(pos) * c.ropePosScale *
                       std::pow(static_cast<double>(c.ropeBase), -2.0 * static_cast<double>(i) / c.ropeDim);
        if (!c.ropeFreqFactors.empty()) theta /= c.ropeFreqFactors[static_cast<size_t>(i)];
        const int64_t ia = c.ropeKind == engine::RopeKind::Norm ? 2 * i : i;
        const int64_t ib = c.ropeKind == engine::RopeKind::Norm ? 2 * i + 1 : i + half;
        const double a = v[ia], b = v[ib];
        v[ia] = a * std::cos(theta) - b * std::sin(theta);
        v[ib] = a * std::sin(theta) + b * std::cos(theta);
    }
}

inline double act(double g, engine::FfnActivation a) {
    if (a == engine::FfnActivation::Silu) return g / (1.0 + std::exp(-g));
    return 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)));
}

} // namespace ref

// Logits (tokens, vocab) of `tokens` at positions 0.., every position, in float64.
inline std::vector<Vec> referenceLogits(const engine::LlamaModel& m, const std::vector<int32_t>& tokens) {
    const engine::ModelConfig& c = m.config();
    const auto T = tokens.size();
    const auto dim = static_cast<size_t>(c.dim), hd = static_cast<size_t>(c.headDim);
    const Vec emb = ref::rows(m.tokenEmbedding());
    std::vector<Vec> x(T, Vec(dim));
    for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < dim; ++i) x[t][i] = emb[static_cast<size_t>(tokens[t]) * dim + i] * c.embedScale;
    for (int64_t l = 0; l < c.layers; ++l) {
        const engine::LayerWeights& w = m.layers()[static_cast<size_t>(l)];
        const ref::Dense wq(w.wq), wk(w.wk), wv(w.wv), wo(w.wo), gate(w.gate), up(w.up), down(w.down);
        std::vector<Vec> q(T), k(T), v(T);
        for (size_t t = 0; t < T; ++t) {
            Vec h = x[t];
            ref::rms(h.data(), w.attnNorm, dim, c.normEps);
            q[t] = ref::matvec(wq, h);
            k[t] = ref::matvec(wk, h);
            v[t] = ref::matvec(wv, h);
            for (size_t i = 0; i < w.bq.size(); ++i) q[t][i] += w.bq[i];
            for (size_t i = 0; i < w.bk.size(); ++i) k[t][i] += w.bk[i];
            for (size_t i = 0; i < w.bv.size(); ++i) v[t][i] += w.bv[i];
            for (int64_t hh = 0; hh < c.heads; ++hh) {
                if (!w.qNorm.empty()) ref::rms(q[t].data() + hh * hd, w.qNorm, hd, c.normEps);
                ref::rope(q[t].data() + hh * hd, c, static_cast<int64_t>(t));
            }
            for (int64_t hh = 0; hh < c.kvHeads; ++hh) {
                if (!w.kNorm.empty()) ref::rms(k[t].data() + hh * hd, w.kNorm, hd, c.normEps);
                ref::rope(k[t].data() + hh * hd, c, static_cast<int64_t>(t));
            }
        }
        const int64_t window = c.windowOf(l);
        const double scale = c.attentionScale();
        for (size_t t = 0; t < T; ++t) {
            Vec o(static_cast<size_t>(c.qDim()), 0.0);
            for (int64_t hh = 0; hh < c.heads; ++hh) {
                const size_t kvh = static_cast<size_t>(hh / (c.heads / c.kvHeads));
                Vec s(t + 1, -INFINITY);
                double mx = -INFINITY;
                for (size_t j = 0; j <= t; ++j) {
                    if (window > 0 && static_cast<int64_t>(t - j) >= window) continue;
                    double d = 0;
                    for (size_t i = 0; i < hd; ++i) d += q[t][hh * hd + i] * k[j][kvh * hd + i];
                    d *= scale;
                    if (c.attnSoftcap > 0) d = c.attnSoftcap * std::tanh(d / c.attnSoftcap);
                    s[j] = d;
                    mx = std::max(mx, d);
                }
                double z = 0;
                for (double& e : s) z += (e = std::exp(e - mx));
                for (size_t j = 0; j <= t; ++j)
                    for (size_t i = 0; i < hd; ++i) o[hh * hd + i] += s[j] / z * v[j][kvh * hd + i];
            }
            Vec a = ref::matvec(wo, o);
            if (!w.postAttnNorm.empty()) ref::rms(a.data(), w.postAttnNorm, dim, c.normEps);
            for (size_t i = 0; i < dim; ++i) x[t][i] += a[i];
            Vec h = x[t];
            ref::rms(h.data(), w.ffnNorm, dim, c.normEps);
            const Vec g = ref::matvec(gate, h), u = ref::matvec(up, h);
            Vec gu(g.size());
            for (size_t i = 0; i < g.size(); ++i) gu[i] = ref::act(g[i], c.activation) * u[i];
            Vec d = ref::matvec(down, gu);
            if (!w.postFfnNorm.empty()) ref::rms(d.data(), w.postFfnNorm, dim, c.normEps);
            for (size_t i = 0; i < dim; ++i) x[t][i] += d[i];
        }
    }
    const ref::Dense out(m.output());
    std::vector<Vec> logits(T);
    for (size_t t = 0; t < T; ++t) {
        Vec h = x[t];
        ref::rms(h.data(), m.outputNorm(), dim, c.normEps);
        logits[t] = ref::matvec(out, h);
        if (c.finalSoftcap > 0)
            for (double& e : logits[t]) e = c.finalSoftcap * std::tanh(e / c.finalSoftcap);
    }
    return logits;
}

} // namespace mb::test
