#include "ui/style/metric_help.h"

#include <QComboBox>

#include "core/metrics/metrics.h"

namespace kcx::ui {

namespace {

QString needsText(const std::string& needs) {
    if (needs == "logprobs")
        return QObject::tr("needs log-probs");
    if (needs == "topk|logits")
        return QObject::tr("needs top-k lists or logits");
    if (needs == "logits")
        return QObject::tr("needs full logits");
    if (needs == "rewards")
        return QObject::tr("needs rewards");
    return QObject::tr("needs tokens");
}

}  // namespace

QString metricMeaning(const QString& name) {
    const MetricInfo* m = findMetric(name.toStdString());
    if (!m)
        return {};
    return QObject::tr("%1 — %2 (per %3; %4)")
        .arg(name, QString::fromStdString(m->description), QString::fromLatin1(levelName(m->level)), needsText(m->needs));
}

void addMetricTooltips(QComboBox* box, const QString& what) {
    auto refresh = [box, what] {
        for (int i = 0; i < box->count(); ++i) {
            const QString name = box->itemData(i).isValid() ? box->itemData(i).toString() : box->itemText(i);
            box->setItemData(i, metricMeaning(name), Qt::ToolTipRole);
        }
        const QString meaning = metricMeaning(box->currentData().isValid() ? box->currentData().toString() : box->currentText());
        box->setToolTip(meaning.isEmpty() ? what : what + QStringLiteral("\n\n") + meaning);
    };
    QObject::connect(box, &QComboBox::currentIndexChanged, box, refresh);
    QObject::connect(box->model(), &QAbstractItemModel::rowsInserted, box, refresh);
    QObject::connect(box->model(), &QAbstractItemModel::modelReset, box, refresh);
    refresh();
}

}  // namespace kcx::ui
