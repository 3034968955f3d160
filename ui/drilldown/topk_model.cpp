#include "ui/drilldown/topk_model.h"

#include <QFont>

#include "ui/style/plain_text.h"

namespace kcx::ui {

TopKCompareModel::TopKCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

namespace {

// Calls f(rank, id, logp) for the usable entries of one kernel's list at a token.
template <class F>
void forEntries(const TopK& topk, size_t token, F&& f) {
    if (!topk.present())
        return;
    const size_t base = token * size_t(topk.k);
    for (int r = 0; r < topk.k; ++r) {
        const int32_t id = topk.ids[base + size_t(r)];
        const double lp = topk.logp[base + size_t(r)];
        if (id >= 0 && !isMissing(lp))   // padding of a short list
            f(r + 1, id, lp);
    }
}

}  // namespace

void TopKCompareModel::setToken(std::shared_ptr<const Run> run, size_t token) {
    beginResetModel();
    run_ = std::move(run);
    token_ = token;
    rows_.clear();
    if (run_ && token < run_->tokenCount()) {
        sampled_ = run_->tokens[token];
        forEntries(run_->topkTrain, token, [&](int rank, int32_t id, double lp) {
            rows_.push_back({id, rank, 0, lp, 0});
        });
        forEntries(run_->topkInf, token, [&](int rank, int32_t id, double lp) {
            const int row = rowOfId(id);
            if (row < 0) {
                rows_.push_back({id, 0, rank, 0, lp});
            } else if (rows_[size_t(row)].rankInf == 0) {
                rows_[size_t(row)].rankInf = rank;
                rows_[size_t(row)].logpInf = lp;
            }
        });
    }
    endResetModel();
}

void TopKCompareModel::setVocab(std::shared_ptr<const TokenVocab> vocab) {
    vocab_ = std::move(vocab);
    if (!rows_.empty())
        emit dataChanged(index(0, Text), index(int(rows_.size()) - 1, Text));
}

int TopKCompareModel::rowOfId(int32_t id) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == id)
            return int(i);
    return -1;
}

int TopKCompareModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int TopKCompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TopKCompareModel::value(const Entry& e, int column) const {
    switch (column) {
    case Id: return e.id;
    case RankTrain: return e.rankTrain ? QVariant(e.rankTrain) : QVariant();
    case LogpTrain: return e.rankTrain ? QVariant(e.logpTrain) : QVariant();
    case RankInf: return e.rankInf ? QVariant(e.rankInf) : QVariant();
    case LogpInf: return e.rankInf ? QVariant(e.logpInf) : QVariant();
    default: return {};
    }
}

QVariant TopKCompareModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry& e = rows_[size_t(index.row())];
    const int col = index.column();
    switch (role) {
    case Qt::DisplayRole: {
        if (col == Text) {
            const auto text = vocab_ ? vocab_->text(e.id) : std::nullopt;
            return text ? escapeTokenText(*text) : QString();
        }
        const QVariant v = value(e, col);
        if (!v.isValid())
            return QString();
        return (col == LogpTrain || col == LogpInf) ? QVariant(formatValue(v.toDouble(), 5)) : v;
    }
    case ValueRole: return value(e, col);
    case Qt::FontRole:
        if (e.id == sampled_) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::ToolTipRole:
        if (col == Text) {
            const auto text = vocab_ ? vocab_->text(e.id) : std::nullopt;
            return text ? plainToolTip(escapeTokenText(*text)) : QVariant();
        }
        if (e.id == sampled_)
            return tr("The sampled token");
        if (!e.rankTrain || !e.rankInf)
            return tr("Listed by only one kernel");
        return {};
    case Qt::TextAlignmentRole:
        return col == Text ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default: return {};
    }
}

QVariant TopKCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case LogpTrain: return tr("The training kernel's log-prob of this id (blank: not in its top-k)");
        case LogpInf: return tr("The inference kernel's log-prob of this id (blank: not in its top-k)");
        case RankTrain: return tr("The id's place in the training kernel's list (1 = most likely)");
        case RankInf: return tr("The id's place in the inference kernel's list (1 = most likely)");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Id: return tr("id");
    case Text: return tr("text");
    case RankTrain: return tr("#train");
    case LogpTrain: return tr("logp_train");
    case RankInf: return tr("#inf");
    case LogpInf: return tr("logp_inf");
    }
    return {};
}

}  // namespace kcx::ui
