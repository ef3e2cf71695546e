// The library's implementation, compiled once for every test, example and
// benchmark of this repository (DIGITAL_DELIVERY_SEPARATE_COMPILATION).
#include <digital_delivery/src.hpp>
