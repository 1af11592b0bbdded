"""Run by mxmod.launch: every rank logs one INFO line and one WARNING line and prints its rank."""
import logging

from mpi4py import MPI

logging.basicConfig(level=logging.INFO)
RANK = MPI.COMM_WORLD.Get_rank()
logging.info('info from rank %d', RANK)
logging.warning('warning from rank %d', RANK)
print('size %d' % MPI.COMM_WORLD.Get_size())
