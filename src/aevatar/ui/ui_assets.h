#ifndef AEVATAR_AEVATAR_UI_UI_ASSETS_H_
#define AEVATAR_AEVATAR_UI_UI_ASSETS_H_

// The /ui page's files (src/aevatar/ui/assets/), compiled into the binary at
// build time: nothing is fetched from a CDN or read from disk at run time.
namespace aevatar::orchestrator::ui {

extern const char kIndexHtml[];
extern const char kAppJs[];
extern const char kStyleCss[];

}  // namespace aevatar::orchestrator::ui

#endif  // AEVATAR_AEVATAR_UI_UI_ASSETS_H_
