import CDBus
