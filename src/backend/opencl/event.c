/* Events: wait, state, profiling times, completion notification, user
 * events. The backend handle is the cl_event itself. */
#include <stdlib.h>

#include "backend/opencl/ocl.h"

kiln_status kiln__ocl_event_wait(size_t num, void *const *events)
{
    if (num == 0)
        return KILN_OK;
    cl_int err = kiln__cl.clWaitForEvents((cl_uint)num,
                                          (const cl_event *)events);
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        return kiln__error_set(KILN_ERROR_EVENT_FAILED, err,
                               "clWaitForEvents: %s (%d): a command waited "
                               "on ended with an error",
                               kiln__ocl_error_name(err), (int)err);
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clWaitForEvents");
}

kiln_status kiln__ocl_event_state(void *event, kiln_event_state *state)
{
    cl_int s = 0;
    cl_int err = kiln__cl.clGetEventInfo((cl_event)event,
                                         CL_EVENT_COMMAND_EXECUTION_STATUS,
                                         sizeof s, &s, NULL);
    if (err != CL_SUCCESS)
        return kiln__ocl_fail(err, "clGetEventInfo");
    switch (s) {
    case CL_COMPLETE: *state = KILN_EVENT_COMPLETE; break;
    case CL_RUNNING: *state = KILN_EVENT_RUNNING; break;
    case CL_SUBMITTED: *state = KILN_EVENT_SUBMITTED; break;
    case CL_QUEUED: *state = KILN_EVENT_QUEUED; break;
    default: *state = KILN_EVENT_ERROR; break; /* negative: failed */
    }
    return KILN_OK;
}

kiln_status kiln__ocl_event_times(void *event, kiln_event_times *times)
{
    static const cl_profiling_info what[4] = {
        CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
        CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    cl_ulong v[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        cl_int err = kiln__cl.clGetEventProfilingInfo(
            (cl_event)event, what[i], sizeof v[i], &v[i], NULL);
        if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
            return kiln__error_set(
                KILN_ERROR_WRONG_STATE, err,
                "clGetEventProfilingInfo: %s (%d): the event has not "
                "completed, or its queue was made without profiling",
                kiln__ocl_error_name(err), (int)err);
        if (err != CL_SUCCESS)
            return kiln__ocl_fail(err, "clGetEventProfilingInfo");
    }
    times->queued = v[0];
    times->submitted = v[1];
    times->started = v[2];
    times->ended = v[3];
    return KILN_OK;
}

typedef struct ocl_notify {
    kiln__notify_fn fn;
    void *arg;
} ocl_notify;

/* Called by the driver once, when the status becomes CL_COMPLETE or
 * negative (OpenCL calls CL_COMPLETE callbacks on failure too). */
static void CL_CALLBACK notify_trampoline(cl_event ev, cl_int status,
                                          void *user)
{
    ocl_notify *n = user;
    (void)ev;
    n->fn(n->arg, status < 0);
    free(n);
}

kiln_status kiln__ocl_event_notify(void *event, kiln__notify_fn fn, void *arg)
{
    ocl_notify *n = malloc(sizeof *n);
    if (!n)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "event notify: out of host memory");
    n->fn = fn;
    n->arg = arg;
    cl_int err = kiln__cl.clSetEventCallback((cl_event)event, CL_COMPLETE,
                                             notify_trampoline, n);
    if (err != CL_SUCCESS) {
        free(n);
        return kiln__ocl_fail(err, "clSetEventCallback");
    }
    return KILN_OK;
}

kiln_status kiln__ocl_user_event_create(void *context, void **event)
{
    cl_int err = CL_SUCCESS;
    cl_event ev = kiln__cl.clCreateUserEvent((cl_context)context, &err);
    *event = NULL;
    if (!ev || err != CL_SUCCESS)
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_CONTEXT,
                              "clCreateUserEvent");
    *event = ev;
    return KILN_OK;
}

kiln_status kiln__ocl_user_event_set(void *event, int failed)
{
    /* Any negative status marks failure; this one reads well in logs. */
    cl_int status =
        failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE;
    cl_int err = kiln__cl.clSetUserEventStatus((cl_event)event, status);
    if (err == CL_INVALID_OPERATION)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, err,
                               "clSetUserEventStatus: %s (%d): the user event "
                               "was already completed",
                               kiln__ocl_error_name(err), (int)err);
    return err == CL_SUCCESS ? KILN_OK
                             : kiln__ocl_fail(err, "clSetUserEventStatus");
}

void kiln__ocl_event_retain(void *event)
{
    if (event)
        kiln__cl.clRetainEvent((cl_event)event);
}

void kiln__ocl_event_release(void *event)
{
    if (event)
        kiln__cl.clReleaseEvent((cl_event)event);
}
