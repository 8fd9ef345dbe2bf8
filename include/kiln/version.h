/* kiln version, as numbers and as a string. */
#ifndef KILN_VERSION_H
#define KILN_VERSION_H

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0
#define KILN_VERSION_STRING "0.1.0"
/* One number that grows with every release: major*10000 + minor*100 + patch. */
#define KILN_VERSION_NUMBER \
    (KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH)

#endif
