"""Prints ``threads <rank> <BLAS threads>`` as this rank sees them after mxmod.launch set it up."""
import threadpoolctl

from mxmod.kvstore import mpi_comm

blas = [p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas']
print('threads %d %d' % (mpi_comm.world().rank, blas[0]))
