/* The demo's pictures: the mask as a PNG (libpng) and a bar chart of the
 * speed-ups on a log scale (cairo). Without the libraries the functions
 * return -1 and demo_pictures_available() says so. */
#ifndef KILN_TOOL_DEMO_PICTURES_H
#define KILN_TOOL_DEMO_PICTURES_H

#include <stdint.h>

typedef struct demo_bar {
    char group[112]; /* bars with the same group are drawn together */
    char label[192];
    double value;  /* > 0 */
    int highlight; /* kiln's own rows */
} demo_bar;

/* 1 if both libpng and cairo were found at build time. */
int demo_pictures_available(void);
/* A grey-scale PNG, inside white on dark. 0 on success, -1 (with a message
 * on stderr) on failure. */
int demo_write_mask_png(const char *path, const uint8_t *mask, int width, int height);
/* Horizontal bars, log-scale axis. 0 on success, -1 on failure. */
int demo_write_chart_png(const char *path, const char *title, const demo_bar *bars, int count);

#endif
