/* The demo's pictures with real libraries: libpng for the mask, cairo for
 * the speed-up chart. See demo_pictures.h. */
#include "demo_pictures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KILN_HAVE_PNG
#include <png.h>
#endif
#ifdef KILN_HAVE_CAIRO
#include <cairo.h>
#endif

int demo_pictures_available(void) {
#if defined(KILN_HAVE_PNG) && defined(KILN_HAVE_CAIRO)
    return 1;
#else
    return 0;
#endif
}

int demo_write_mask_png(const char *path, const uint8_t *mask, int width, int height) {
#ifdef KILN_HAVE_PNG
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    uint8_t *row = malloc((size_t)width);
    if (!png || !info || !row || setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "kiln demo: could not write %s\n", path);
        png_destroy_write_struct(&png, &info);
        free(row);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    for (int y = 0; y < height; y++) {
        const uint8_t *m = mask + (size_t)y * (size_t)width;
        for (int x = 0; x < width; x++)
            row[x] = m[x] ? 235 : 30;
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    return fclose(f) == 0 ? 0 : -1;
#else
    (void)path;
    (void)mask;
    (void)width;
    (void)height;
    return -1;
#endif
}

int demo_write_chart_png(const char *path, const char *title, const demo_bar *bars, int count) {
#ifdef KILN_HAVE_CAIRO
    if (count <= 0)
        return -1;
    /* Layout: a label column on the left, the bars on a log axis. */
    const double left = 470, right = 90, top = 60, bar_h = 20, gap = 4, group_h = 30, width = 1200;
    int groups = 0;
    double vmin = 1.0, vmax = 1.0;
    for (int i = 0; i < count; i++) {
        if (i == 0 || strcmp(bars[i].group, bars[i - 1].group) != 0)
            groups++;
        if (bars[i].value > 0 && bars[i].value < vmin)
            vmin = bars[i].value;
        if (bars[i].value > vmax)
            vmax = bars[i].value;
    }
    double lo = floor(log10(vmin)), hi = ceil(log10(vmax));
    if (hi <= lo)
        hi = lo + 1;
    double height = top + groups * group_h + count * (bar_h + gap) + 50;
    double plot_w = width - left - right;
    cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
    cairo_t *cr = cairo_create(surf);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 18);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_move_to(cr, 20, 32);
    cairo_show_text(cr, title);

    /* Decade grid lines and their labels. */
    double plot_bottom = height - 40;
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 12);
    for (double e = lo; e <= hi; e += 1.0) {
        double x = left + (e - lo) / (hi - lo) * plot_w;
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, x, top - 10);
        cairo_line_to(cr, x, plot_bottom);
        cairo_stroke(cr);
        char txt[32];
        snprintf(txt, sizeof txt, "%gx", pow(10.0, e));
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        cairo_move_to(cr, x - 10, plot_bottom + 18);
        cairo_show_text(cr, txt);
    }

    double y = top;
    for (int i = 0; i < count; i++) {
        if (i == 0 || strcmp(bars[i].group, bars[i - 1].group) != 0) {
            cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                                   CAIRO_FONT_WEIGHT_BOLD);
            cairo_set_font_size(cr, 14);
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            cairo_move_to(cr, 20, y + 18);
            cairo_show_text(cr, bars[i].group);
            y += group_h;
            cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                                   CAIRO_FONT_WEIGHT_NORMAL);
            cairo_set_font_size(cr, 12);
        }
        double v = bars[i].value > 0 ? bars[i].value : pow(10.0, lo);
        double w = (log10(v) - lo) / (hi - lo) * plot_w;
        if (w < 1)
            w = 1;
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        cairo_move_to(cr, 36, y + bar_h - 6);
        cairo_show_text(cr, bars[i].label);
        if (bars[i].highlight)
            cairo_set_source_rgb(cr, 0.85, 0.33, 0.10);
        else
            cairo_set_source_rgb(cr, 0.35, 0.55, 0.80);
        cairo_rectangle(cr, left, y, w, bar_h);
        cairo_fill(cr);
        char txt[32];
        snprintf(txt, sizeof txt, v >= 10 ? "%.0fx" : "%.2gx", v);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        cairo_move_to(cr, left + w + 6, y + bar_h - 6);
        cairo_show_text(cr, txt);
        y += bar_h + gap;
    }
    cairo_destroy(cr);
    cairo_status_t st = cairo_surface_write_to_png(surf, path);
    cairo_surface_destroy(surf);
    if (st != CAIRO_STATUS_SUCCESS) {
        fprintf(stderr, "kiln demo: could not write %s: %s\n", path, cairo_status_to_string(st));
        return -1;
    }
    return 0;
#else
    (void)path;
    (void)title;
    (void)bars;
    (void)count;
    return -1;
#endif
}
