// Both kernels' top-k lists at one token, side by side: one row per id in either list
// (the training kernel's order first, then ids only the inference kernel listed), with
// each kernel's log-prob (next to each other, to compare) and rank; an id missing from one
// list is blank on that side.
#pragma once

#include <QAbstractTableModel>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/formats/run.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

class TopKCompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Text, LogpTrain, LogpInf, RankTrain, RankInf, ColumnCount };
    enum Role { ValueRole = Qt::UserRole };   // rank (1-based) or log-prob; invalid when blank

    struct Entry {
        int32_t id = 0;
        int rankTrain = 0, rankInf = 0;   // 1-based; 0 = not in that list
        double logpTrain = 0, logpInf = 0;
    };

    explicit TopKCompareModel(QObject* parent = nullptr);

    // The lists at flat token index `token` of `run` (a null run clears).
    void setToken(std::shared_ptr<const Run> run, size_t token);
    // Texts for ids (optional; ids without text show none).
    void setVocab(std::shared_ptr<const TokenVocab> vocab);
    void clear() { setToken(nullptr, 0); }

    const std::vector<Entry>& entries() const { return rows_; }
    int rowOfId(int32_t id) const;   // -1 when in neither list

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant value(const Entry& e, int column) const;

    std::shared_ptr<const Run> run_;
    std::shared_ptr<const TokenVocab> vocab_;
    size_t token_ = 0;
    int32_t sampled_ = 0;
    std::vector<Entry> rows_;
};

}  // namespace kcx::ui
