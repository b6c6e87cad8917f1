/* ids.c -- prints CAIRN_TYPE_ID of every type in types.h, from this file
 * (in expressions) and from ids_other.c (from a static table). */
#include <cairn.h>
#include <stdio.h>
#include "types.h"

#define PRINT(T) printf("%s %#llx\n", #T, (unsigned long long)CAIRN_TYPE_ID(T));

int main(void) {
    TYPEID_TYPES(PRINT)
    print_other_ids();
    return 0;
}
