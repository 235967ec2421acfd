#pragma once
// Light and dark palettes for the whole application (Fusion style), and charts drawn to match.

#include <QChart>

namespace racktwin::gui {

// Sets the application's palette; remembered by the window in QSettings ("dark").
void apply_palette(bool dark);
bool dark_palette();
// A chart in the application's palette: the dark chart theme keeps the series colours readable.
void match_palette(QChart* chart);

}  // namespace racktwin::gui
