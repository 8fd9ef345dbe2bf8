/* kiln timeline TRACE.json [OUT.png]: draws a trace written by kiln
 * (kiln_trace_start / KILN_TRACE) as a picture: one row per queue, grouped
 * by device, each command a box at the time the device ran it, coloured by
 * kind (uploads, kernels, downloads, other), with a time axis. Reads kiln's
 * own one-event-per-line format, not arbitrary Chrome traces. Also prints
 * per-row busy time, so a reader without the picture sees the overlap. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#ifdef KILN_HAVE_CAIRO
#include <cairo.h>
#endif

#define MAX_ROWS 64

typedef struct box {
    char name[64];
    unsigned pid, tid;
    double ts, dur; /* microseconds */
} box;

typedef struct row {
    unsigned pid, tid;
    char device[160];
    double busy;
} row;

static char g_devices[16][160]; /* names of pid 1..16 */

static int read_boxes(FILE *f, box **out, size_t *count) {
    size_t cap = 1024, n = 0;
    box *v = malloc(cap * sizeof *v);
    char line[2048];
    if (!v)
        return -1;
    while (fgets(line, sizeof line, f)) {
        box b;
        unsigned pid;
        char name[160];
        if (sscanf(
                line,
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"%159[^\"]",
                &pid, name) == 2) {
            if (pid >= 1 && pid <= 16)
                snprintf(g_devices[pid - 1], sizeof g_devices[0], "%s", name);
            continue;
        }
        if (sscanf(line,
                   "{\"ph\":\"X\",\"name\":\"%63[^\"]\",\"pid\":%u,\"tid\":%u,\"ts\":%lf,"
                   "\"dur\":%lf",
                   b.name, &b.pid, &b.tid, &b.ts, &b.dur) != 5)
            continue;
        if (n == cap) {
            box *w = realloc(v, 2 * cap * sizeof *v);
            if (!w) {
                free(v);
                return -1;
            }
            v = w, cap *= 2;
        }
        v[n++] = b;
    }
    *out = v, *count = n;
    return 0;
}

#ifdef KILN_HAVE_CAIRO
/* upload, kernel, download, other */
static int kind_of(const char *name) {
    if (strstr(name, "kiln_buffer_write") || strstr(name, "kiln_array_write"))
        return 0;
    if (strstr(name, "kiln_buffer_read") || strstr(name, "kiln_array_read"))
        return 2;
    if (!strncmp(name, "kiln_buffer_", 12) || !strncmp(name, "kiln_queue_", 11))
        return 3;
    return 1;
}

static const double kColours[4][3] = {
    { 0.27, 0.51, 0.71 }, { 0.93, 0.49, 0.19 }, { 0.30, 0.65, 0.35 }, { 0.6, 0.6, 0.6 }
};
static const char *const kKinds[4] = { "upload", "kernel", "download", "other" };

static int draw(const char *path, const box *b, size_t n, const row *rows, int nrows, double t0,
                double t1) {
    const double left = 300, right = 30, top = 70, row_h = 34, width = 1600;
    double height = top + nrows * row_h + 70, plot_w = width - left - right;
    double span = t1 > t0 ? t1 - t0 : 1;
    cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
    cairo_t *cr = cairo_create(surf);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 16);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_move_to(cr, 20, 28);
    char title[256];
    snprintf(title, sizeof title, "kiln timeline: %zu commands over %.3f ms", n, span / 1e3);
    cairo_show_text(cr, title);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 12);
    for (int k = 0; k < 4; k++) { /* legend */
        double x = left + k * 120;
        cairo_set_source_rgb(cr, kColours[k][0], kColours[k][1], kColours[k][2]);
        cairo_rectangle(cr, x, 40, 14, 14);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        cairo_move_to(cr, x + 20, 52);
        cairo_show_text(cr, kKinds[k]);
    }
    /* time axis: about ten round ticks */
    double step = pow(10, floor(log10(span / 10)));
    if (span / step > 20)
        step *= 5;
    else if (span / step > 10)
        step *= 2;
    double bottom = top + nrows * row_h;
    for (double t = 0; t <= span; t += step) {
        double x = left + t / span * plot_w;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bottom);
        cairo_stroke(cr);
        char txt[32];
        snprintf(txt, sizeof txt, "%g ms", t / 1e3);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        cairo_move_to(cr, x - 12, bottom + 18);
        cairo_show_text(cr, txt);
    }
    for (int r = 0; r < nrows; r++) {
        double y = top + r * row_h;
        char label[220];
        snprintf(label, sizeof label, "%.32s  queue %u", rows[r].device, rows[r].tid);
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        cairo_move_to(cr, 10, y + row_h / 2 + 4);
        cairo_show_text(cr, label);
        for (size_t i = 0; i < n; i++) {
            if (b[i].pid != rows[r].pid || b[i].tid != rows[r].tid)
                continue;
            int k = kind_of(b[i].name);
            double x = left + (b[i].ts - t0) / span * plot_w;
            double w = b[i].dur / span * plot_w;
            cairo_set_source_rgb(cr, kColours[k][0], kColours[k][1], kColours[k][2]);
            cairo_rectangle(cr, x, y + 5, w < 1 ? 1 : w, row_h - 10);
            cairo_fill(cr);
        }
    }
    cairo_status_t st = cairo_surface_write_to_png(surf, path);
    cairo_destroy(cr);
    cairo_surface_destroy(surf);
    return st == CAIRO_STATUS_SUCCESS ? 0 : -1;
}
#endif

int kiln_cmd_timeline(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: kiln timeline TRACE.json [OUT.png]\n"
               "Draws a trace written with KILN_TRACE=TRACE.json (or kiln_trace_start) as a\n"
               "picture (one row per queue) and prints each row's busy time.\n");
        return argc < 2 ? 2 : 0;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "kiln timeline: cannot read %s\n", argv[1]);
        return 1;
    }
    box *b = NULL;
    size_t n = 0;
    int bad = read_boxes(f, &b, &n);
    fclose(f);
    if (bad || n == 0) {
        fprintf(stderr, "kiln timeline: %s holds no commands of a kiln trace\n", argv[1]);
        free(b);
        return 1;
    }
    row rows[MAX_ROWS];
    int nrows = 0;
    double t0 = b[0].ts, t1 = b[0].ts + b[0].dur;
    for (size_t i = 0; i < n; i++) {
        t0 = b[i].ts < t0 ? b[i].ts : t0;
        t1 = b[i].ts + b[i].dur > t1 ? b[i].ts + b[i].dur : t1;
        int r = 0;
        while (r < nrows && (rows[r].pid != b[i].pid || rows[r].tid != b[i].tid))
            r++;
        if (r == nrows && nrows < MAX_ROWS) {
            rows[r] = (row){ .pid = b[i].pid, .tid = b[i].tid };
            snprintf(rows[r].device, sizeof rows[r].device, "%s",
                     b[i].pid >= 1 && b[i].pid <= 16 ? g_devices[b[i].pid - 1] : "?");
            nrows++;
        }
        if (r < nrows)
            rows[r].busy += b[i].dur;
    }
    printf("%zu commands over %.3f ms\n", n, (t1 - t0) / 1e3);
    for (int r = 0; r < nrows; r++)
        printf("  %-48.48s queue %-3u busy %9.3f ms (%4.1f%%)\n", rows[r].device, rows[r].tid,
               rows[r].busy / 1e3, 100 * rows[r].busy / (t1 - t0));
    int rc = 0;
    if (argc > 2) {
#ifdef KILN_HAVE_CAIRO
        rc = draw(argv[2], b, n, rows, nrows, t0, t1);
        if (rc)
            fprintf(stderr, "kiln timeline: cannot write %s\n", argv[2]);
        else
            printf("wrote %s\n", argv[2]);
#else
        fprintf(stderr, "kiln timeline: built without cairo: no picture (install "
                        "libcairo2-dev, rebuild)\n");
        rc = 1;
#endif
    }
    free(b);
    return rc;
}
