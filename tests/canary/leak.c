/* A deliberate leak, built with the sanitizers by `make check` and run through
 * scripts/run-sanitized.sh, which must reject it: proof that the leak check is live. */
#include <stdlib.h>

#include <stvm.h>

int main(void)
{
    stvm_vm *vm;
    if (stvm_vm_create(NULL, &vm) != STVM_OK)
        return 2;
    return 0;   /* the VM is never freed */
}
