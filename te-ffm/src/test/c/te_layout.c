/*
 * Prints sizeof and offsetof of the two Transfer Engine structs io.orbitkv.ffm.te binds, declared here as the
 * transfer_engine_c.h ABI declares them (int, void *, int32_t, uint32_t, uint64_t, uint64_t; int, uint64_t), so
 * that TransferEngineLayoutTest can compare the Java layouts with what the C compiler lays out. Lines are
 * "sizeof JavaClass n" and "offsetof JavaClass.field n".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct transfer_request
{
    int opcode;
    void *source;
    int32_t target_id;
    uint32_t file_id;
    uint64_t target_offset;
    uint64_t length;
};

struct transfer_status
{
    int status;
    uint64_t transferred_bytes;
};

#define STRUCT_SIZEOF(java, type) printf("sizeof %s %zu\n", #java, sizeof(type))
#define OFFSETOF(java, field, type) printf("offsetof %s.%s %zu\n", #java, #field, offsetof(type, field))

int main(void)
{
    STRUCT_SIZEOF(TransferRequest, struct transfer_request);
    OFFSETOF(TransferRequest, opcode, struct transfer_request);
    OFFSETOF(TransferRequest, source, struct transfer_request);
    OFFSETOF(TransferRequest, target_id, struct transfer_request);
    OFFSETOF(TransferRequest, file_id, struct transfer_request);
    OFFSETOF(TransferRequest, target_offset, struct transfer_request);
    OFFSETOF(TransferRequest, length, struct transfer_request);
    STRUCT_SIZEOF(TransferStatusStruct, struct transfer_status);
    OFFSETOF(TransferStatusStruct, status, struct transfer_status);
    OFFSETOF(TransferStatusStruct, transferred_bytes, struct transfer_status);
    return 0;
}
