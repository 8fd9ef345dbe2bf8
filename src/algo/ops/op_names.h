/* The names of the array operators for messages ("SQRT", "MAX"), so that
 * a message names the op the user passed, not its number (issue 41). An
 * unknown op gives NULL. */
#ifndef KILN_ALGO_OP_NAMES_H
#define KILN_ALGO_OP_NAMES_H

#include "kiln.h"

const char *kiln__binary_op_name(kiln_binary_op op);
const char *kiln__unary_op_name(kiln_unary_op op);
const char *kiln__reduce_op_name(kiln_reduce_op op);

#endif
